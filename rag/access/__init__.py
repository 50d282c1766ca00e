"""Document access control: who may read which document (docs/security.md)."""
from rag.access.model import (ANONYMOUS, NOBODY, Access, DefaultAccess, Principal, ReaderScope, can_read,
                              document_access, stored_access)

__all__ = ["ANONYMOUS", "NOBODY", "Access", "DefaultAccess", "Principal", "ReaderScope", "can_read",
           "document_access", "stored_access"]
