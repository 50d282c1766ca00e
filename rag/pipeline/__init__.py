"""The pipeline: one set of components (:mod:`.components`), the request path as one ordered
tuple of steps (:mod:`.steps`), a runner that knows no stage (:mod:`.runner`), and the
:class:`Pipeline` facade over them (:mod:`.core`)."""
from rag.pipeline.components import Components, embedding_scorer
from rag.pipeline.core import Pipeline
from rag.pipeline.listing import ListedDocument
from rag.pipeline.runner import Step, StepKind
from rag.pipeline.state import (Answered, Gated, Request, Retrieved, Searched, StageEvent, State, StepRecord,
                                set_aside_entries)
from rag.pipeline.steps import STEPS
from rag.pipeline.warmup import Warmup
from rag.types import Ordering

__all__ = ["Answered", "Components", "Gated", "ListedDocument", "Ordering", "Pipeline", "Request", "Retrieved", "STEPS", "Searched",
           "StageEvent", "State", "Step", "StepKind", "StepRecord", "Warmup", "embedding_scorer",
           "set_aside_entries"]
