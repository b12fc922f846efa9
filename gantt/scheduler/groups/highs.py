"""The one place Gantt calls HiGHS (``highspy``, HiGHS's own Python API).

:func:`solve` takes a mixed-integer program as plain arrays (:class:`Mip`:
costs, bounds, integrality, row bounds and the matrix as triplets) and an
optional starting solution, and returns an :class:`Outcome` in Gantt's
words. Everything HiGHS-specific (the column-compressed matrix HiGHS
reads, its options, statuses and info fields) stays here.

* The starting solution is handed to HiGHS (``setSolution``) before it
  runs: when it is feasible, it is HiGHS's first incumbent, so the answer
  is never worse than it. HiGHS checks it and ignores one that breaks a
  row or a bound.
* ``time_limit`` (seconds) and ``node_limit`` (branch-and-bound nodes,
  deterministic) stop the search; HiGHS then keeps its best incumbent.
* :attr:`Outcome.status`: ``optimal`` (HiGHS proved it, within its
  relative gap tolerance of 1e-4), ``infeasible`` (HiGHS proved that no
  solution exists), ``stopped`` (a limit ran out; ``x`` is the best
  incumbent, or None when there was none), ``error`` (anything else,
  e.g. a numerical failure: treated as ``stopped`` without a solution).
* :attr:`Outcome.objective` is ``cost @ x`` of the solution returned
  (HiGHS's own ``objective_function_value`` may be that of a better
  incumbent it could not return when a limit stopped it);
  :attr:`Outcome.bound` is HiGHS's ``mip_dual_bound`` and
  :attr:`Outcome.gap` HiGHS's relative gap of ``x`` against it,
  ``|objective - bound| / |objective|`` (as HiGHS's ``mip_gap``), each
  None when unknown (no solution, no finite bound, a zero objective above
  its bound).
"""

import dataclasses
import threading

import highspy
import numpy as np

#: HiGHS's model statuses, in Gantt's words
_STATUS = {
    highspy.HighsModelStatus.kOptimal: "optimal",
    highspy.HighsModelStatus.kInfeasible: "infeasible",
    highspy.HighsModelStatus.kTimeLimit: "stopped",
    highspy.HighsModelStatus.kSolutionLimit: "stopped",
    highspy.HighsModelStatus.kIterationLimit: "stopped",
    highspy.HighsModelStatus.kInterrupt: "stopped",
}
_FEASIBLE = 2        # HiGHS's kSolutionStatusFeasible
#: HiGHS runs its branch and bound on a task scheduler shared by every
#: instance of a process, and a worker decides groups on several RPC
#: threads: one run at a time (group decisions are rare; each is bounded
#: by its time budget).
_ONE_RUN = threading.Lock()


@dataclasses.dataclass(frozen=True, eq=False)
class Mip:
    """Minimise ``cost @ x`` subject to ``lower <= x <= upper``,
    ``row_lower <= A @ x <= row_upper``, ``x[j]`` integer where
    ``integer[j]``; ``A[rows[i], cols[i]] = values[i]``."""

    cost: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    integer: np.ndarray          # bool per column
    row_lower: np.ndarray
    row_upper: np.ndarray
    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray


@dataclasses.dataclass(frozen=True, eq=False)
class Outcome:
    """What HiGHS found (see the module docstring)."""

    x: np.ndarray | None
    status: str
    objective: float | None = None
    bound: float | None = None
    gap: float | None = None
    nodes: int = 0


def solve(mip, time_limit, start=None, node_limit=None):
    """Run HiGHS on ``mip`` (see the module docstring)."""
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.setOptionValue("time_limit", float(time_limit))
    if node_limit is not None:
        highs.setOptionValue("mip_max_nodes", int(node_limit))
    highs.passModel(_lp(mip))
    if start is not None:
        solution = highspy.HighsSolution()
        solution.col_value = np.asarray(start, dtype=float).tolist()
        highs.setSolution(solution)
    with _ONE_RUN:
        highs.run()
    return _outcome(highs, np.asarray(mip.cost, dtype=float))


def _lp(mip):
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(mip.cost), len(mip.row_lower)
    lp.col_cost_ = np.asarray(mip.cost, dtype=float)
    lp.col_lower_ = np.asarray(mip.lower, dtype=float)
    lp.col_upper_ = np.asarray(mip.upper, dtype=float)
    lp.row_lower_ = np.asarray(mip.row_lower, dtype=float)
    lp.row_upper_ = np.asarray(mip.row_upper, dtype=float)
    lp.integrality_ = [highspy.HighsVarType.kInteger if i
                       else highspy.HighsVarType.kContinuous
                       for i in mip.integer]
    start, index, value = _compressed(mip)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = lp.num_col_, lp.num_row_
    lp.a_matrix_.start_, lp.a_matrix_.index_ = start, index
    lp.a_matrix_.value_ = value
    return lp


def _compressed(mip):
    """The triplets column by column: (start per column and one past the
    last, row index, value)."""
    cols = np.asarray(mip.cols, dtype=np.int64)
    order = np.lexsort((np.asarray(mip.rows), cols))
    counts = np.bincount(cols, minlength=len(mip.cost))
    start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return (start, np.asarray(mip.rows, dtype=np.int32)[order],
            np.asarray(mip.values, dtype=float)[order])


def _outcome(highs, cost):
    status = _STATUS.get(highs.getModelStatus(), "error")
    info = highs.getInfo()
    if status == "infeasible":
        return Outcome(None, status, nodes=int(info.mip_node_count))
    status = "stopped" if status == "error" else status
    bound, nodes = _finite(info.mip_dual_bound), int(info.mip_node_count)
    if info.primal_solution_status != _FEASIBLE:
        return Outcome(None, status, None, bound, None, nodes)
    x = np.array(highs.getSolution().col_value[:len(cost)])
    objective = float(cost @ x)
    return Outcome(x, status, objective, bound, gap(objective, bound), nodes)


def gap(objective, bound):
    """HiGHS's relative gap of ``objective`` against ``bound``."""
    if bound is None:
        return None
    if objective == bound:
        return 0.0
    return abs(objective - bound) / abs(objective) if objective else None


def _finite(value):
    value = float(value)
    return value if np.isfinite(value) else None
