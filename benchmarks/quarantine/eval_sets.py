"""Usage: .venv/bin/python benchmarks/quarantine/eval_sets.py

Before (d2b583e) / after: passages of the eval sets the quarantine would withhold, and questions past the 4,000-char limit."""
import json

from run import old_sanitize, _chunker
from rag.context.sanitize import injection_signals
from rag.types import Document
old = old_sanitize("d2b583e")
_, chunker = _chunker()
D = "/work/shared/data"
def squad():
    js = json.load(open(f"{D}/squad2/dev-v2.0-half.json"))
    for a in js["data"]:
        for i, p in enumerate(a["paragraphs"]):
            yield f"{a['title']}-{i}", p["context"], [q["question"] for q in p["qas"]]
def nomiracl():
    for line in open(f"{D}/nomiracl/ko.test.jsonl"):
        o = json.loads(line)
        for p in o["passages"]:
            yield p["docid"], (p.get("title") or "") + "\n\n" + p["text"], [o["question"]]
def beir(path):
    for line in open(f"{D}/{path}/queries.jsonl"):
        yield None, None, [json.loads(line)["text"]]
for name, it in (("squad2", squad()), ("nomiracl_ko", nomiracl()), ("korquad_q", beir("korquad1")),
                 ("msmarco_en_q", beir("msmarco/en")), ("msmarco_ko_q", beir("msmarco/ko"))):
    seen = set()
    docs = blocks = ob = nb = longest = over = 0
    for did, text, qs in it:
        for q in qs:
            longest = max(longest, len(q.strip()))
            over += len(q.strip()) > 4000
        if did is None or did in seen:
            continue
        seen.add(did)
        docs += 1
        for b in (c.text for c in chunker.chunk(Document(id=str(did), text=text, version="1"))):
            blocks += 1
            ob += bool(old.injection_signals(b))
            nb += bool(injection_signals(b))
    print(f"{name}: passages {docs}, blocks {blocks}, blocks with a signal before {ob}, after {nb}; longest question {longest} chars, over the limit {over}")
