"""The open session as an undoable document (no Qt)."""

from workbench.document.changes import What
from workbench.document.document import (
    Change,
    Document,
    NameInUse,
    OverBudget,
    new_operation,
    unique_name,
)
from workbench.document.results import ResultCache

__all__ = ["Change", "Document", "NameInUse", "OverBudget", "ResultCache", "What",
           "new_operation", "unique_name"]
