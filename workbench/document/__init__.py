"""The open session as an undoable document (no Qt)."""

from workbench.document.changes import What
from workbench.document.document import Change, Document, new_operation
from workbench.document.results import ResultCache

__all__ = ["Change", "Document", "ResultCache", "What", "new_operation"]
