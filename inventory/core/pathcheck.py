"""Does a traced fibre path work end to end? Pure code: no ORM.

Checks every mated pair (plug into receptacle) for connector type, fibre count, pinning and
polish, and composes the TIA-568.3 polarity of every fibre segment into the channel's net
fibre mapping: a duplex channel must cross (Tx1 -> Rx), a parallel (MPO) channel must arrive
reversed (position 1 -> N, what Method A/B/C all produce when built correctly).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Mating:
    """A plug meeting a receptacle (a module connector or a panel/device port)."""

    where: str
    cable: str
    plug_type: str
    plug_fibres: int | None
    plug_pinned: bool | None
    plug_polish: str
    socket_type: str
    socket_fibres: int | None
    socket_pinned: bool | None
    socket_polish: str
    sealed: bool = False


@dataclass(frozen=True)
class FibreSegment:
    cable: str
    polarity: str  # A, B, C, AB, AA or "" when unknown
    fibres: int | None


@dataclass
class PathVerdict:
    ok: bool = True
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def fail(self, text: str) -> None:
        self.ok = False
        self.problems.append(text)


def permutation(polarity: str, n: int) -> list[int] | None:
    """Where fibre i (0-based) at the near end arrives at the far end."""
    if polarity in ("A", "AA"):
        return list(range(n))
    if polarity in ("B", "AB"):
        return [n - 1 - i for i in range(n)]
    if polarity == "C":
        return [i + 1 if i % 2 == 0 else i - 1 for i in range(n)]
    return None


def check_matings(matings: list[Mating], verdict: PathVerdict) -> None:
    for m in matings:
        if m.sealed or not m.socket_type:
            continue
        if m.plug_type and m.plug_type != m.socket_type:
            verdict.fail(f"{m.cable} at {m.where}: {m.plug_type} plug in a {m.socket_type} receptacle")
            continue
        if m.plug_type == "MPO":
            if m.plug_fibres and m.socket_fibres and m.plug_fibres != m.socket_fibres:
                verdict.fail(
                    f"{m.cable} at {m.where}: MPO-{m.plug_fibres} plug in an MPO-{m.socket_fibres} receptacle"
                )
            if m.plug_pinned is not None and m.socket_pinned is not None and m.plug_pinned == m.socket_pinned:
                kind = "pinned to pinned" if m.plug_pinned else "unpinned to unpinned"
                verdict.fail(f"{m.cable} at {m.where}: {kind} MPO mating (one side must be pinned)")
        if m.plug_polish and m.socket_polish and m.plug_polish != m.socket_polish:
            verdict.fail(f"{m.cable} at {m.where}: {m.plug_polish} plug in an {m.socket_polish} receptacle")


def check_polarity(segments: list[FibreSegment], verdict: PathVerdict) -> None:
    if not segments:
        return
    counts = {s.fibres or 2 for s in segments}
    if len(counts) > 1:
        verdict.notes.append("polarity through a fan-out cassette is not verified automatically")
        return
    n = counts.pop()
    net = list(range(n))
    for seg in segments:
        perm = permutation(seg.polarity, n)
        if perm is None:
            verdict.notes.append(f"{seg.cable}: polarity not recorded, channel polarity not verified")
            return
        net = [perm[i] for i in net]
    expected = [n - 1 - i for i in range(n)]
    if net != expected:
        methods = " + ".join(f"{s.cable}({s.polarity})" for s in segments)
        if net == list(range(n)):
            verdict.fail(f"polarity: {methods} is straight end to end, Tx meets Tx; one segment must flip")
        else:
            verdict.fail(f"polarity: {methods} does not deliver fibre 1 to position {n}")


def check_path(matings: list[Mating], fibre_segments: list[FibreSegment]) -> PathVerdict:
    verdict = PathVerdict()
    check_matings(matings, verdict)
    check_polarity(fibre_segments, verdict)
    return verdict
