"""Tools and live data (seed 004): a registry, question analysis and tool selection, the tool loop,
and tool results as citable schema + YAML evidence. See docs/tools.md."""
from rag.tools.calls import CallRecord, argument_errors, call_tool
from rag.tools.format import (FormattedResult, TokenComparison, ToolResultError, Trim, compare_tokens, format_result,
                              infer_schema, render_schema)
from rag.tools.loop import (TOOL_PHASE_THREADS, ToolEvidence, ToolLoop, ToolPhase, ToolTrace, evidence_ids,
                            tool_evidence)
from rag.tools.registry import (Approver, ToolError, ToolRegistry, ToolSpec, WriteRequest, from_openapi, from_records,
                                load_tools)
from rag.tools.select import ToolQuestion, ScoredTool, Selection, ToolSelector, tool_summary, tool_text

__all__ = ["Approver", "CallRecord", "TOOL_PHASE_THREADS", "FormattedResult", "ToolQuestion", "ScoredTool", "Selection", "TokenComparison",
           "ToolError", "ToolEvidence", "ToolLoop", "ToolPhase", "ToolRegistry", "ToolResultError", "ToolSelector",
           "ToolSpec", "ToolTrace", "Trim", "WriteRequest", "argument_errors", "call_tool", "compare_tokens", "evidence_ids", "format_result", "from_openapi",
           "from_records", "infer_schema", "load_tools", "render_schema", "tool_evidence", "tool_summary", "tool_text"]
