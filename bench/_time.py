import copy, tempfile, time, functools
from collections import defaultdict
from bench import context_trace_data as data
from bench.compaction_trace import IN_PASSING
from bench.context_trace_data import EPHEMERAL_TOOLS, TOOLS, build_trace, load_haystack
from memory.config import load_config
from memory.service import Memory
import memory.context.assemble as A
spent = defaultdict(float)
def wrap(mod, name):
    f = getattr(mod, name)
    @functools.wraps(f)
    def g(*a, **k):
        t = time.perf_counter(); r = f(*a, **k); spent[name] += time.perf_counter() - t; return r
    setattr(mod, name, g)
for n in ("summarise", "instructions", "span_text", "digest", "boundary"):
    wrap(A, n)
trace = build_trace([load_haystack(0)], constraints=(*data.CONSTRAINTS, *IN_PASSING))
cfg = load_config().replace("service", data_dir=tempfile.mkdtemp())
with Memory(cfg) as m:
    for meth in ("add", "add_summary", "latest_summary"):
        wrap(m.tasks, meth)
    wrap(m._assembler, "_covered_facts")
    for t, turn in enumerate(trace.turns[:120]):
        held = list(trace.messages[:turn.call_end])
        kw = dict(window=32768, task_id="x", tools=list(TOOLS), ephemeral_tools=EPHEMERAL_TOOLS, recall=False)
        spent.clear()
        t0 = time.perf_counter(); r = m.context("ns", copy.deepcopy(held), **kw); a = (time.perf_counter() - t0) * 1000
        if r.report.summary and r.report.summary.created:
            v = m.tasks.summaries("ns", "x"); new = v[-1].covered_tokens - (v[-2].covered_tokens if len(v) > 1 else 0)
            print(t, f"{a:.0f} ms span {new}", {k: round(v * 1000, 1) for k, v in spent.items()})
