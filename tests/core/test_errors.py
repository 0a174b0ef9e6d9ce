"""One family of errors: every error ragdesk raises on purpose is a RagdeskError, defined in core/errors.py."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import ragdesk.core
from ragdesk.cli.library import CliError
from ragdesk.core import errors
from ragdesk.core.errors import RagdeskError

SIGNALS = {"ragdesk.core.pdf.ExtractionTimeout"}  # a BaseException that interrupts a PDF read, never shown


def test_every_error_class_lives_in_errors_and_descends_from_the_root() -> None:
    defined = {
        f"{name}.{cls.__name__}"
        for name in (f"ragdesk.core.{m.name}" for m in pkgutil.iter_modules(ragdesk.core.__path__))
        if not name.split(".")[-1].startswith("_")
        for _, cls in inspect.getmembers(importlib.import_module(name), inspect.isclass)
        if issubclass(cls, BaseException) and cls.__module__ == name
    }
    assert defined - SIGNALS == {
        f"ragdesk.core.errors.{c.__name__}" for c in vars(errors).values() if inspect.isclass(c)
    }
    for cls in vars(errors).values():
        if inspect.isclass(cls):
            assert issubclass(cls, RagdeskError), cls


@pytest.mark.parametrize(
    ("name", "builtin"),
    [
        ("MeaningIndexUnwritable", OSError),
        ("QuestionsError", ValueError),
        ("NotIndexed", LookupError),
        ("DenseUnavailable", RuntimeError),
    ],
)
def test_each_keeps_the_builtin_its_callers_catch(name: str, builtin: type[Exception]) -> None:
    assert issubclass(getattr(errors, name), builtin)


def test_the_modules_that_raise_them_still_export_them() -> None:
    from ragdesk.core import embeddings, store, whynot

    assert store.IndexMissing is errors.IndexMissing and issubclass(errors.IndexMissing, errors.IndexDamaged)
    assert embeddings.GenerationReplaced is errors.GenerationReplaced and whynot.NotIndexed is errors.NotIndexed
    assert issubclass(CliError, RagdeskError)
