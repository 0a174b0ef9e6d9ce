"""Every error ragdesk raises on purpose, in one family: `except RagdeskError` catches them all.

Each keeps the built-in base its callers catch it by (an unwritable meaning index is still an
OSError, a malformed questions file a ValueError). Modules re-export the ones they raise.
"""

from __future__ import annotations


class RagdeskError(Exception):
    """The root: a condition ragdesk detects and says in one line (never a bug's traceback)."""


# ---- the index on disk (core.store) -------------------------------------------------------------
class IndexDamaged(RagdeskError):
    """The stored index is missing, damaged or of another format; it must be rebuilt."""


class IndexMissing(IndexDamaged):
    """No index has been built for this folder yet (a kind of IndexDamaged: both mean "build it");
    catch it before IndexDamaged where the two are said differently."""


class IndexFolderRefused(RagdeskError):
    """A folder ragdesk will not keep an index in (not its own, the notes folder itself, a file…):
    said in one line, and nothing in it is touched."""


class IndexBusy(RagdeskError):
    """Another process holds this index's build lock (raised only when waiting was declined)."""


# ---- building (core.build, core.walk) ------------------------------------------------------------
class BuildCancelled(RagdeskError):
    """The build was cancelled; the previous index (if any) is untouched."""


class IgnoreFileUnreadable(RagdeskError):
    """The folder's .ragdeskignore exists but cannot be read, or holds a pattern that cannot be used:
    indexing stops rather than index the notes it excludes."""


class PdfUnavailable(RagdeskError):
    """pypdf is not installed."""


# ---- the meaning index (core.dense, core.embeddings) ---------------------------------------------
class DenseUnavailable(RagdeskError, RuntimeError):
    """No embedding backend is installed; the message says what to install."""


class EmbeddingCancelled(RagdeskError):
    """Embedding stopped on request; the batches written so far are kept for the next run."""


class GenerationReplaced(EmbeddingCancelled):
    """Another process published a newer generation of the index while this one embedded an older one
    (whose rows its refresh copied, or whose base it shares): embed the current one instead (reopen it),
    or hours go into a generation that may be deleted and leave the new one waiting for the lock."""


class MeaningIndexUnwritable(RagdeskError, OSError):
    """The meaning index could not be stored mid-way (a full disk): embedding stops at once rather than
    go on for hours in memory; the batches stored before are kept, and the next run continues."""


# ---- asking (core.whynot, core.evaluate) ----------------------------------------------------------
class NotIndexed(RagdeskError, LookupError):
    """The note named is not in the index (not found, or skipped: the message says why)."""


class QuestionsError(RagdeskError, ValueError):
    """A malformed questions file; the message names the line and what is wrong."""


# ---- the assistant (core.assistant, ragdesk mcp) ----------------------------------------------------
class Refused(RagdeskError, ValueError):
    """An assistant's tool call refused (a path outside the notes, an argument out of range): one line
    says why; the MCP server answers it as a tool error."""
