import time, cProfile, pstats
from bench import context_trace_data as data
from bench.context_trace_data import build_trace, load_haystack
from memory.context import parse_messages
from memory.context.summary import summarise, terms
from memory.tokens import get_counter
trace = build_trace([load_haystack(0)])
msgs = parse_messages(list(trace.messages))
c = get_counter()
# a span of ~20k tokens and a later part of ~10k
from memory.context.messages import message_tokens
tot = 0; i = 1
while tot < 20000: tot += message_tokens(c, msgs[i]); i += 1
j = i; t2 = 0
while t2 < 10000: t2 += message_tokens(c, msgs[j]); j += 1
span, later = msgs[1:i], msgs[i:j]
print(len(span), tot, len(later), t2)
for k in range(3):
    terms.cache_clear(); import memory.context.summary as S; S._sentences.cache_clear(); S._identifiers.cache_clear()
    t = time.perf_counter(); s = summarise(span, c, 900, later=later, query="what"); print(f"{(time.perf_counter()-t)*1000:.1f} ms", s.tokens)
import memory.context.summary as S; S._sentences.cache_clear(); S._identifiers.cache_clear(); pr = cProfile.Profile(); terms.cache_clear(); pr.enable(); summarise(span, c, 900, later=later); pr.disable()
pstats.Stats(pr).sort_stats("tottime").print_stats(12)
