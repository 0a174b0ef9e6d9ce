"""One query's way through the window: the search bar's request to the search worker, the results list,
then (one event later) the selected result's explanation and the prompt, then its ranks per analyzer.

The window wires the panes' signals here; this class decides what is asked and what is shown when.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QGuiApplication

from ..core.analyzers import AnalyzerConfig
from ..core.explain import explanation_text
from ..core.languages import dropped_text
from ..core.modes import asks_meaning
from ..core.params import SearchParams
from ..core.paths import shown
from ..core.query import parse
from ..core.results import Hit
from ..core.secrets import Scrubber
from . import texts
from .child_process import describe
from .explanation_pane import ExplanationPane
from .prompt_pane import PromptPane
from .results_pane import RESULTS_K, ResultsPane
from .search_bar import SearchBar
from .search_worker import SearchOutcome, SearchRequest
from .session import LONG_MS, NORMAL_MS, SHORT_MS, Session
from .settings import AppSettings
from .status_line import StatusLine

# The selected result's ranks under each analyzer are asked for once the selection has rested this
# long: not while new results are laid out and drawn (the search thread's Python would make the
# window's thread wait for the GIL), nor for every row passed while holding Down.
RANKS_DELAY_MS = 60
# A new result set's explanation and prompt wait this long: past the list's own paint (a posted event),
# so the two layouts are two events of the loop, not one (each 10-15 ms; together they stalled 25-40).
EXPLAIN_DELAY_MS = 5


@dataclass(frozen=True)
class Panes:
    """The window's panes a query passes through."""

    bar: SearchBar
    results: ResultsPane
    why: ExplanationPane
    prompt: PromptPane


class SearchFlow(QObject):
    """Runs the search bar's query and shows its outcome in the panes, newest query only."""

    results_shown = Signal(object)  # SearchResult, once its list, explanation and prompt are shown

    def __init__(self, panes: Panes, session: Session, settings: AppSettings, status: StatusLine) -> None:
        super().__init__(status)
        self.panes, self.session, self.settings, self.status = panes, session, settings, status
        self.last_request: SearchRequest | None = None
        self.results_k = RESULTS_K  # how many results the list shows ("Show more" adds a page)
        self._explain_later = False  # a new result set is being laid out: its explanation waits
        self._ran: tuple[str, str] | None = None  # the last search's (chosen, ran) modes: a change is said
        self._drawn_outcome: SearchOutcome | None = None
        self._ranks_timer = QTimer(self)
        self._ranks_timer.setSingleShot(True)
        self._ranks_timer.setInterval(RANKS_DELAY_MS)
        self._ranks_timer.timeout.connect(self._on_ranks_timer_timeout)
        self._explain_timer = QTimer(self)  # a new result set's explanation and prompt, after its list
        self._explain_timer.setSingleShot(True)
        self._explain_timer.setInterval(EXPLAIN_DELAY_MS)
        self._explain_timer.timeout.connect(self._on_explain_timer_timeout)
        bar, results, why, prompt = panes.bar, panes.results, panes.why, panes.prompt
        bar.search_requested.connect(self.run)
        bar.query_edited.connect(self._on_query_edited)
        bar.mode_changed.connect(self._on_mode_changed)
        results.hit_selected.connect(self._on_hit_selected)
        results.more_requested.connect(self.show_more)
        results.grouping_changed.connect(self.update_prompt)
        results.sort_changed.connect(self._on_sort_changed)
        results.model.inclusion_changed.connect(self.update_prompt)
        why.copy_explanation_button.clicked.connect(self.copy_explanation)
        why.secrets_reveal_requested.connect(self._on_secrets_reveal_requested)
        prompt.settings_changed.connect(self.update_prompt)
        searcher = session.engine.searcher
        searcher.search_finished.connect(self._on_search_finished)
        searcher.search_failed.connect(self._on_search_failed)
        searcher.ranks_found.connect(self._on_ranks_found)
        searcher.ranks_failed.connect(self._on_ranks_failed)
        searcher.completions_found.connect(bar.completer.set_values)
        bar.completer.values_wanted.connect(session.engine.find_completions)

    def analyzer(self) -> AnalyzerConfig:
        return self.panes.bar.analyzer(self.settings.analyzer())

    def build_wants(self) -> tuple[AnalyzerConfig, str]:
        """What a build must prepare for: the analyzer searched with and the mode asked for (the session
        decides from it and the settings whether the meaning index is computed)."""
        return self.analyzer(), self.panes.bar.mode

    def forget(self) -> None:
        """Another folder opens: its chunk ids, pins and results are not this one's."""
        self.panes.why.set_pinned(None)
        self.panes.bar.completer.forget()
        self._ran = None
        self.panes.results.clear()
        self.panes.why.show_hit(None)
        self.status.clear_note()

    # ---- asking ---------------------------------------------------------------------------------
    def run(self) -> None:
        bar = self.panes.bar
        bar.settle()
        if self.session.library is None:
            return
        pinned = self.panes.why.pinned
        params = SearchParams(
            self.analyzer(), bar.k1, bar.b, self.results_k, fusion=bar.fusion, group=False, sort=self.panes.results.sort
        )
        pinned_id = pinned.chunk_id if pinned is not None else None
        engine = self.session.engine
        request = SearchRequest(engine.next_serial(), bar.query, params, pinned_id, bar.mode, self.settings.embedder)
        self.last_request = request
        engine.search(request)

    def _on_sort_changed(self, _sort: str) -> None:
        self.run()

    def _on_query_edited(self, _text: str) -> None:
        self.results_k = RESULTS_K  # a new query starts with one page of results

    def show_more(self) -> None:
        """The next page of results (the list holds the first RESULTS_K; this adds as many)."""
        self.results_k += RESULTS_K
        self.run()

    def _on_mode_changed(self, _choice: str) -> None:
        mode = self.panes.bar.mode  # "hybrid, plain RRF" is hybrid too
        if asks_meaning(mode) and self.session.compute_meaning():
            self.status.show(
                "Computing the meaning index (once per folder, newest notes first); until it is complete, "
                f"{mode} search covers the chunks embedded so far"
            )
        self.run()

    # ---- showing --------------------------------------------------------------------------------
    def _current(self, outcome: SearchOutcome) -> bool:
        return self.last_request is not None and outcome.request.serial == self.last_request.serial

    def _empty_text(self, outcome: SearchOutcome) -> str:
        library = self.session.library
        if library is not None and not library.note_paths:
            skipped = len(library.skipped)
            return texts.no_notes_text(library.settings.load.extensions, outcome.other_files, skipped)
        return texts.no_results_text(outcome.result)

    def _on_search_finished(self, outcome: SearchOutcome) -> None:
        if not self._current(outcome) or outcome.library is not self.session.library:
            return  # overtaken by a newer query or index
        result, why = outcome.result, self.panes.why
        if why.pinned is not None and outcome.pinned_rows:
            why.update_pinned(outcome.pinned_score, outcome.pinned_rows)
        # The list is drawn first; the selected result's explanation and the prompt follow in the next
        # event, so the event loop never waits for both layouts at once (#38: 42-72 ms stalls).
        self._explain_later = True
        try:
            self.panes.results.show_outcome(outcome, "" if result.hits else self._empty_text(outcome))
        finally:
            self._explain_later = False
        self._drawn_outcome = outcome
        self._explain_timer.start()
        self.panes.bar.show_mode_reason(result.mode, result.mode_reason, outcome.meaning)
        ran = (outcome.request.mode, result.mode)
        if self._ran is not None and self._ran[0] == ran[0] == "auto" and self._ran[1] != ran[1]:
            self.status.say(  # under the user's eyes: scores jump from 0.13 to 32
                f"Auto now searches by {result.mode}: {result.mode_reason}. Scores of different modes "
                "are on different scales.",
                NORMAL_MS,
            )
        self._ran = ran
        if result.reason and result.hits:
            self.status.note(result.reason, NORMAL_MS - 1000)
        else:
            self.status.clear_note()  # the previous query's note is not about this one

    def _on_explain_timer_timeout(self) -> None:
        """The second half of showing a result: the selected hit's explanation and the prompt."""
        outcome = self._drawn_outcome
        if outcome is None or not self._current(outcome):
            return  # a newer result is on its way
        self._on_hit_selected(self.panes.results.current_hit())
        self.update_prompt()
        self.results_shown.emit(outcome.result)

    def _on_search_failed(self, error: Exception) -> None:
        if not self.session.recover(error):
            self.status.show(f"Search failed: {describe(error)}", LONG_MS)

    # ---- the selected result ----------------------------------------------------------------------
    def _on_hit_selected(self, hit: Hit | None) -> None:
        if self._explain_later:
            return  # a new result set: explained once its list is drawn (_on_explain_timer_timeout)
        model, why, library = self.panes.results.model, self.panes.why, self.session.library
        if hit is None:
            self._ranks_timer.stop()
            why.show_hit(None)
            return
        why.show_hit(
            hit,
            model.result,
            shown=model.shown(hit) if model.is_masked(hit) else None,
            spans=model.highlights.get(hit.chunk_id, []),
            findings=model.findings.get(hit.chunk_id, []),  # found once, when the results arrived
            stale=hit.chunk_id in model.stale,
            context=library.chunk_context_parts(hit.chunk_id) if library is not None else [],
        )
        why.ranks_pending()
        self._ranks_timer.start()

    def _on_secrets_reveal_requested(self, chunk_id: int) -> None:
        self.panes.results.model.reveal(chunk_id)
        self._on_hit_selected(self.panes.results.current_hit())

    def _on_ranks_timer_timeout(self) -> None:
        hit = self.panes.results.current_hit()
        if hit is not None and self.last_request is not None:
            self.session.engine.find_ranks(self.last_request, hit.chunk_id)

    def _about_selection(self, serial: int, chunk_id: int) -> bool:
        """Whether a worker's answer is about the selected result of the current query."""
        hit = self.panes.results.current_hit()
        request = self.last_request
        return hit is not None and hit.chunk_id == chunk_id and request is not None and serial == request.serial

    def _on_ranks_failed(self, serial: int, chunk_id: int, error: Exception) -> None:
        if self._about_selection(serial, chunk_id):
            self.panes.why.show_ranks_unavailable(str(error))

    def _on_ranks_found(self, serial: int, chunk_id: int, ranks: dict[str, int | None]) -> None:
        if self._about_selection(serial, chunk_id):
            self.panes.why.show_ranks(ranks)

    def copy_explanation(self) -> None:
        """The selected result's explanation as text on the clipboard, secrets scrubbed."""
        hit = self.panes.results.current_hit()
        if hit is None:
            return
        query = self.panes.bar.field.text()
        header = f"Why “{query}” ranked {hit.shown_path} › {shown(hit.heading)} #{hit.rank}:"
        result = self.panes.results.model.result
        if result is not None and result.left_out.dropped:
            header += "\n" + dropped_text(result.left_out)
        scrub = Scrubber(query)  # the clipboard leaves the machine: no secret on it
        text = explanation_text(hit.explain, hit.score, header)
        QGuiApplication.clipboard().setText("\n".join(scrub.text(line) for line in text.split("\n")))
        self.status.say("Copied explanation", SHORT_MS)

    # ---- the prompt -----------------------------------------------------------------------------
    def _question(self) -> str:
        """What the prompt asks: the question without its filters, exclusions and operators (the
        shown result's parse when it is of the text in the field)."""
        typed, result = self.panes.bar.field.text(), self.panes.results.model.result
        if result is not None and result.parsed is not None and result.query == typed:
            return result.parsed.question
        return parse(typed).question

    def update_prompt(self, *_args: object) -> None:
        model = self.panes.results.model
        prompt = self.panes.prompt.show_prompt(
            self._question(),
            model.included_hits(),
            model.findings,
            self.settings.instructions,
            model.ticked,
            model.unticked_count(),
        )
        model.set_in_prompt(prompt.ranks())
