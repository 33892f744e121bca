"""Rule files: the shipped set loads and covers every kind; bad files fail with messages naming file, rule and fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.errors import ConfigError
from memory.facts.extract import extract
from memory.facts.rules import KINDS, LANGS, load_rules, shipped_rules_path

_GOOD_RULE = """
[[rule]]
id = "user.timezone"
lang = "en"
kind = "profile"
pattern = '''^my time ?zone is (?P<zone>[a-z/_+-]+\\d*)$'''
key = "timezone"
value = "{zone}"
"""


def write(tmp_path: Path, text: str, name: str = "user.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_rules_load_and_cover_every_kind_in_both_languages() -> None:
    rules = load_rules()
    assert shipped_rules_path().is_file()
    assert rules.sources == (str(shipped_rules_path()),)
    for lang in LANGS:
        assert {rule.kind for rule in rules.for_lang(lang)} == set(KINDS)
        markers = rules.markers[lang]
        assert markers.question is not None and markers.negated is not None and markers.reported is not None
    assert rules.code_lines is not None


def test_rules_are_ordered_by_priority_then_file_order() -> None:
    rules = load_rules().rules
    assert [r.priority for r in rules] == sorted((r.priority for r in rules), reverse=True)
    assert len({r.id for r in rules}) == len(rules)


def test_an_extra_rule_file_adds_rules_that_extraction_uses(tmp_path: Path) -> None:
    rules = load_rules(write(tmp_path, _GOOD_RULE))
    facts = extract("My timezone is Europe/Berlin.", rules).facts
    assert [(f.kind, f.key, f.value, f.rule) for f in facts] == [
        ("profile", "profile:timezone", "Europe/Berlin", "user.timezone")
    ]
    assert rules.sources[-1].endswith("user.toml")


def test_user_rules_can_reuse_shipped_fragments_and_vocab(tmp_path: Path) -> None:
    seats = """
[[rule]]
id = "user.seats"
lang = "en"
kind = "limit"
pattern = '''^we need (?P<number><<num>>) seats$'''
key = "seats"
value = "{number} seats"
"""
    rules = load_rules(write(tmp_path, seats))
    assert [(f.key, f.value) for f in extract("We need twelve seats.", rules).facts] == [("limit:seats", "12 seats")]


def test_no_files_at_all_is_an_error() -> None:
    with pytest.raises(ConfigError, match="no rule files"):
        load_rules(include_shipped=False)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError, match=r"nope\.toml: rule file not found; expected an existing TOML file"):
        load_rules(missing)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[rule]\nid = 1", r"user\.toml: not valid TOML"),
        ("rules = []", r"user\.toml: unknown top-level key\(s\) \['rules'\]; expected only"),
        ('fragments = "x"', r"user\.toml: 'fragments' must be a table, got str"),
        ("rule = 3", r"user\.toml: 'rule' must be an array of tables"),
        ("[markers.fr]\nquestion = ['x']", r"user\.toml: markers\.fr: expected a language in \['en', 'zh'\]"),
        ("[markers.en]\nquestions = ['x']", r"user\.toml: markers\.en\.questions: unknown marker; expected one of"),
        ("[markers.en]\nquestion = 'x'", r"user\.toml: markers\.en\.question must be a list of strings"),
        ("[markers.en]\nquestion = ['(']", r"user\.toml: markers\.en\.question: bad regular expression"),
        ("code_lines = ['[']", r"user\.toml: code_lines: bad regular expression"),
        ("[vocab.unit]\npage = 3", r"user\.toml: vocab\.unit entry 'page' must be a string, got int"),
    ],
)
def test_bad_file_structure_names_the_file_and_what_was_expected(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        load_rules(write(tmp_path, text))


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (('id = "user.timezone"\n', ""), r"rule #1 \(no id\): missing field\(s\) \['id'\]; every rule needs"),
        (('kind = "profile"', 'kind = "wish"'), r"rule 'user\.timezone': kind must be one of \['prohibition'"),
        (('lang = "en"', 'lang = "de"'), r"rule 'user\.timezone': lang must be one of \['en', 'zh'\], got 'de'"),
        (('value = "{zone}"', 'value = "{zone}"\ncolour = "red"'), r"rule 'user\.timezone': unknown field\(s\) \['colour'\]"),
        (('value = "{zone}"', 'value = "{city}"'),
         r"rule 'user\.timezone': value template uses \{city\} but the pattern has no group 'city'"),
        (("(?P<zone>", "(?P<zone"), r"rule 'user\.timezone' pattern: bad regular expression"),
        (("^my time", "<<nowhere>>my time"), r"rule 'user\.timezone' pattern: unknown fragment <<nowhere>>"),
        (('value = "{zone}"', 'value = "{zone}"\npriority = "high"'), r"rule 'user\.timezone': priority must be an integer"),
        (('value = "{zone}"', 'value = "{zone}"\nwhole_clause = "yes"'), r"rule 'user\.timezone': whole_clause must be true or false, got 'yes'"),
        (('key = "timezone"', "key = 5"), r"rule 'user\.timezone' field 'key' must be a string, got int"),
    ],
)
def test_bad_rules_name_the_file_the_rule_and_what_was_expected(
    tmp_path: Path, change: tuple[str, str], expected: str
) -> None:
    text = _GOOD_RULE.replace(*change)
    assert text != _GOOD_RULE
    with pytest.raises(ConfigError, match=r"user\.toml: " + expected):
        load_rules(write(tmp_path, text))


def test_a_duplicate_id_names_both_files(tmp_path: Path) -> None:
    first = write(tmp_path, _GOOD_RULE, "one.toml")
    second = write(tmp_path, _GOOD_RULE, "two.toml")
    with pytest.raises(ConfigError, match=r"two\.toml: rule 'user\.timezone': duplicate id \(first defined in .*one\.toml\)"):
        load_rules(first, second)


def test_a_duplicate_of_a_shipped_rule_is_refused(tmp_path: Path) -> None:
    clash = _GOOD_RULE.replace("user.timezone", load_rules().rules[0].id)
    with pytest.raises(ConfigError, match="duplicate id"):
        load_rules(write(tmp_path, clash))


def test_fragments_that_refer_to_each_other_in_a_cycle_are_refused(tmp_path: Path) -> None:
    text = "[fragments]\na = '<<b>>'\nb = '<<a>>'\n" + _GOOD_RULE.replace("^my time", "<<a>>my time")
    with pytest.raises(ConfigError, match="fragments nest more than 10 deep"):
        load_rules(write(tmp_path, text))
