"""A request worded as a question is a request (issue 20: "Could you not use bullet points?" used to be ignored as a
question), in English and Chinese; real questions still yield nothing."""

from __future__ import annotations

import pytest

from memory.facts.extract import extract
from memory.facts.rules import load_rules

RULES = load_rules()


@pytest.mark.parametrize(("text", "fact"), [
    ("Could you not use bullet points?", ("prohibition", "bullet points")),
    ("Can you stop using emojis?", ("prohibition", "emojis")),
    ("Can you always answer in French?", ("format", "French")),
    ("Could you keep answers under 100 words?", ("limit", "100 words")),
    ("Would you use Python 3 only, please?", ("requirement", "Python 3")),
    ("能不能别用表格？", ("prohibition", "表格")),
    ("可以不要用英文吗？", ("prohibition", "英文")),
    ("你能不能不要再用感叹号了？", ("prohibition", "感叹号")),
])
def test_requests_worded_as_questions_yield_their_rule(text: str, fact: tuple[str, str]) -> None:
    found = [(f.kind, f.value) for f in extract(text, RULES).facts]
    assert found == [fact], found


@pytest.mark.parametrize("text", [
    "Can you help me with my essay?",
    "Could you not have told me earlier?",
    "Should I use tabs or spaces?",
    "Could you explain how the parser works?",
    "你能帮我看看这段代码吗？",
    "你能不能用中文回答",
    "能不能告诉我明天的天气？",
])
def test_questions_and_one_off_asks_yield_nothing(text: str) -> None:
    assert extract(text, RULES).facts == ()
