"""What is indexed, as one principal may see it (``Pipeline.documents``, ``rag documents``,
``GET /v1/documents``).

Only the document versions the principal may read are listed, and whether a version is current is
decided among those alone (the version policy over the readable documents, as answering does): a
newer version the caller may not read neither appears nor makes its older one ``superseded``. So
nothing of a document the caller may not read shows in the listing or its count."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from rag.index.version_order import version_key

if TYPE_CHECKING:
    from rag.access.model import Principal
    from rag.pipeline.components import Components

Standing = Literal["current", "superseded", "not_in_force"]


@dataclass(frozen=True)
class ListedDocument:
    """One indexed version of a document. ``status``: ``current`` (answered from), ``superseded``
    (another version is answered from: ``current_version``), ``not_in_force`` (``retrieval.versions:
    {as_of: ...}`` puts every version of the document after that date). ``file``: the file it was
    read from, relative to its folder ("" when not read from a folder)."""

    id: str
    version: str
    title: str
    uri: str
    chunks: int
    status: Standing
    current_version: str | None
    file: str = ""

    def to_json(self) -> dict:
        return {"id": self.id, "version": self.version, "title": self.title, "uri": self.uri, "chunks": self.chunks,
                "status": self.status, "current_version": self.current_version, "file": self.file}


def list_documents(components: "Components", principal: "Principal | None") -> tuple[ListedDocument, ...]:
    """The versions ``principal`` (None: anonymous) may read, by id then version (natural order)."""
    scope = components.reader_scope(principal)
    records = components.index.documents
    allowed = components.allowed_versions(scope)  # None: retrieval.versions is "all"
    out: list[ListedDocument] = []
    for key in sorted(records, key=lambda k: (k[0], version_key(k[1]), k[1])):
        rec = records[key]
        if not scope.allows(rec.access):
            continue
        current = rec.version if allowed is None else allowed.get(rec.id)
        status: Standing = ("current" if current == rec.version else "superseded" if current is not None
                             else "not_in_force")
        file = rec.meta.get("file")
        out.append(ListedDocument(rec.id, rec.version, rec.title, rec.uri, rec.n_chunks, status, current,
                                   file if isinstance(file, str) else ""))
    return tuple(out)
