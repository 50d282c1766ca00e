"""Generator capabilities are declared (``GeneratorCapabilities``) and warming is the generator's own
``warm``: the pipeline asks neither a class nor a private name (issue 44, item 3)."""
from __future__ import annotations

import pytest

from rag.answer import (ExtractiveGenerator, GeneratorCapabilities, LlamaCppGenerator, OpenAIGenerator,
                        capabilities_of)
from rag.answer.contract import warm_generator
from rag.config import GenerationConfig
from rag.errors import ConfigError
from tests.fakes import RecordingGenerator


class ToolCaller(RecordingGenerator):
    """Not an OpenAIGenerator: declares tool calling and has a client of its own."""

    capabilities = GeneratorCapabilities(tool_calling=True)
    client = object()


class Warms(RecordingGenerator):
    def __init__(self) -> None:
        super().__init__()
        self.warmed: list[str] = []

    def warm(self, question: str) -> None:
        self.warmed.append(question)


def test_each_builtin_generator_declares_what_it_can_do():
    assert capabilities_of(OpenAIGenerator(GenerationConfig(backend="openai", model="m"))).tool_calling
    assert not capabilities_of(LlamaCppGenerator(GenerationConfig(backend="llamacpp"))).tool_calling
    assert not capabilities_of(ExtractiveGenerator(GenerationConfig())).tool_calling
    assert capabilities_of(RecordingGenerator()) == GeneratorCapabilities()  # declares nothing: none


def test_a_capabilities_attribute_of_another_type_is_refused():
    class Odd(RecordingGenerator):
        capabilities = {"tool_calling": True}

    with pytest.raises(TypeError, match="GeneratorCapabilities"):
        capabilities_of(Odd())


def test_tools_go_to_the_generator_that_declares_them(built, derived):
    caller = ToolCaller()
    p = derived(built, generator=caller)
    assert p.components.tool_generator() is caller  # declared, whatever its class
    with pytest.raises(ConfigError, match="generation.backend: openai"):
        derived(built, generator=RecordingGenerator()).components.tool_generator()


def test_warming_is_the_generators_own(built, derived):
    gen = Warms()
    derived(built, generator=gen).components.warm_generator("연차 휴가는 며칠인가요?")
    assert gen.warmed == ["연차 휴가는 며칠인가요?"]
    warm_generator(RecordingGenerator(), "q")  # one without ``warm`` warms nothing, and does not fail


def test_the_extractive_generator_warms_its_scorer():
    asked: list[tuple[str, list[str]]] = []

    def scorer(question, sentences):
        asked.append((question, list(sentences)))
        return [0.0] * len(sentences)

    ExtractiveGenerator(GenerationConfig(), scorer).warm("q?")
    assert asked == [("q?", ["q?"])]
    ExtractiveGenerator(GenerationConfig()).warm("q?")  # no scorer: nothing to load
