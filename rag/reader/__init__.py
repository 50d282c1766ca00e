"""The learned reader: one model family that owns its data recipe, its training and its model card.

The data part (``rag reader data build``) and the learned combination's first step (docs/reader.md):

- :mod:`rag.reader.splits`: the fixed hash split (train / calib / eval) every stage shares;
- :mod:`rag.reader.examples`: the labelled (question, passage, sentence) rows as frozen dataclasses;
- :mod:`rag.reader.inputs`: where each input file comes from (repository, commit, path, size, sha256);
- :mod:`rag.reader.sources`: readers of KorQuAD 1.0, SQuAD 2.0, MS MARCO en/ko, NoMIRACL-ko and SciFact;
- :mod:`rag.reader.mining`: hard negative passages mined by the project's own BM25;
- :mod:`rag.reader.data`: the recipe: sharded, resumable, crash-safe JSONL with a manifest;
- :mod:`rag.reader.features`: the combination's passage and sentence feature vectors (frozen name lists);
- :mod:`rag.reader.featstore`: those vectors for a sample of groups, chunked, cached, resumable;
- :mod:`rag.reader.combine`: the logistic heads, their JSON artifact (``rag/_models/reader-combiner``);
- :mod:`rag.reader.answerable`: the question-level answerable head's raw-feature aggregates and threshold;
- :mod:`rag.reader.evaluate` and :mod:`rag.reader.experiment`: training, the eval measures and the report;
- :mod:`rag.reader.groups`: the neural reader's training groups (passage windows, sentences, unanswerable);
- :mod:`rag.reader.neural`: its resumable CPU trainer (``rag reader train-model``) and model card;
- :mod:`rag.reader.neural_eval`: its held-back measures and calibration (``rag reader eval-model``).
"""
