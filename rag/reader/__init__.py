"""The learned reader: one model family that owns its data recipe, its training and its model card.

This turn holds the data part (``rag reader data build``, docs/reader.md):

- :mod:`rag.reader.splits`: the fixed hash split (train / calib / eval) every stage shares;
- :mod:`rag.reader.examples`: the labelled (question, passage, sentence) rows as frozen dataclasses;
- :mod:`rag.reader.inputs`: where each input file comes from (repository, commit, path, size, sha256);
- :mod:`rag.reader.sources`: readers of KorQuAD 1.0, SQuAD 2.0, MS MARCO en/ko, NoMIRACL-ko and SciFact;
- :mod:`rag.reader.mining`: hard negative passages mined by the project's own BM25;
- :mod:`rag.reader.data`: the recipe: sharded, resumable, crash-safe JSONL with a manifest.
"""
