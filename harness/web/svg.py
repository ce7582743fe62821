"""Small charts drawn on the server as SVG text: an interval plot, a heatmap and a line
chart. Each returns one ``<svg>`` element with a ``<title>`` per mark (the browser shows
it on hover), so the report needs no plotting library and no script to draw."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape

__all__ = ["PALETTE", "heat_colour", "heatmap", "interval_plot", "line_chart", "nice_ticks"]

PALETTE = ("#2f6fde", "#e4572e", "#17a589", "#a569bd", "#f1c40f", "#34495e", "#e67e22",
           "#16a085", "#c0392b", "#7f8c8d")


def _f(x: float) -> str:
    return f"{x:.1f}"


def nice_ticks(lo: float, hi: float, count: int = 6, *, integer: bool = False) -> list[float]:
    """Round tick values covering [lo, hi] (whole numbers only if ``integer``)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(1, count - 1)
    mag = 10 ** math.floor(math.log10(raw))
    steps = (1, 2, 5, 10) if integer else (1, 2, 2.5, 5, 10)
    step = next(m * mag for m in steps if m * mag >= raw)
    if integer:
        step = max(1.0, step)
    first = math.floor(lo / step) * step
    ticks = []
    t = first
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 10))
        t += step
    if ticks[-1] < hi:
        ticks.append(round(t, 10))
    return ticks


class _Scale:
    def __init__(self, lo: float, hi: float, out_lo: float, out_hi: float) -> None:
        self.lo, self.hi, self.out_lo, self.out_hi = lo, hi, out_lo, out_hi

    def __call__(self, x: float) -> float:
        span = self.hi - self.lo or 1.0
        return self.out_lo + (x - self.lo) / span * (self.out_hi - self.out_lo)


def _svg(width: float, height: float, label: str, body: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(width)}" '
            f'height="{_f(height)}" viewBox="0 0 {_f(width)} {_f(height)}" role="img" '
            f'aria-label="{escape(label)}">' + "".join(body) + "</svg>")


def interval_plot(rows: Sequence[tuple[str, float, float, float]], *, label: str = "Elo",
                  colours: Mapping[str, str] | None = None, width: float = 560) -> str:
    """One line per ``(name, value, lower, upper)``: a bar from lower to upper with a dot
    at the value, on a shared horizontal axis with a line at 0. ``colours`` maps names to
    colours (default: the palette in order)."""
    left, right, row_h, top = 130.0, 20.0, 26.0, 10.0
    height = top + row_h * len(rows) + 40
    lo = min([0.0, *(r[2] for r in rows)])
    hi = max([0.0, *(r[3] for r in rows)])
    ticks = nice_ticks(lo, hi)
    x = _Scale(ticks[0], ticks[-1], left, width - right)
    axis_y = top + row_h * len(rows) + 6
    body = [f'<line x1="{_f(x(0))}" x2="{_f(x(0))}" y1="{_f(top)}" y2="{_f(axis_y)}" '
            'stroke="#98a2b3" stroke-dasharray="3 3"/>']
    for t in ticks:
        body.append(f'<line x1="{_f(x(t))}" x2="{_f(x(t))}" y1="{_f(axis_y)}" '
                    f'y2="{_f(axis_y + 4)}" stroke="#667085"/>'
                    f'<text x="{_f(x(t))}" y="{_f(axis_y + 16)}" text-anchor="middle">'
                    f'{t:g}</text>')
    body.append(f'<text x="{_f((left + width - right) / 2)}" y="{_f(axis_y + 32)}" '
                f'text-anchor="middle">{escape(label)}</text>')
    for i, (name, value, lower, upper) in enumerate(rows):
        y = top + row_h * i + row_h / 2
        colour = (colours or {}).get(name, PALETTE[i % len(PALETTE)])
        body.append(
            f'<g class="interval" data-name="{escape(name)}">'
            f'<title>{escape(name)}: {_elo(value)} ({_elo(lower)} to {_elo(upper)})</title>'
            f'<text x="{_f(left - 8)}" y="{_f(y + 4)}" text-anchor="end">{escape(name)}</text>'
            f'<line x1="{_f(x(lower))}" x2="{_f(x(upper))}" y1="{_f(y)}" y2="{_f(y)}" '
            f'stroke="{colour}" stroke-width="6" stroke-linecap="round" opacity=".45"/>'
            f'<circle cx="{_f(x(value))}" cy="{_f(y)}" r="5" fill="{colour}"/></g>')
    return _svg(width, height, f"{label} with 95% intervals", body)


def heat_colour(v: float) -> str:
    """0 -> red, 0.5 -> white, 1 -> green."""
    v = min(1.0, max(0.0, v))
    if v < 0.5:
        t = v / 0.5
        r, g, b = 214 + (255 - 214) * t, 69 + (255 - 69) * t, 65 + (255 - 65) * t
    else:
        t = (v - 0.5) / 0.5
        r, g, b = 255 - (255 - 26) * t, 255 - (255 - 150) * t, 255 - (255 - 80) * t
    return f"rgb({r:.0f},{g:.0f},{b:.0f})"


def heatmap(names: Sequence[str], values: Mapping[str, Mapping[str, float | None]], *,
            label: str, cell: float = 58) -> str:
    """A square matrix of values in [0, 1] (row against column), coloured from red (0)
    through white to green (1), each cell labelled as a percentage."""
    left, top = 120.0, 70.0
    size = cell * len(names)
    body = []
    for j, b in enumerate(names):
        cx = left + cell * j + cell / 2
        body.append(f'<text x="{_f(cx)}" y="{_f(top - 8)}" text-anchor="start" '
                    f'transform="rotate(-35 {_f(cx)} {_f(top - 8)})">{escape(b)}</text>')
    for i, a in enumerate(names):
        y = top + cell * i
        body.append(f'<text x="{_f(left - 8)}" y="{_f(y + cell / 2 + 4)}" '
                    f'text-anchor="end">{escape(a)}</text>')
        for j, b in enumerate(names):
            x = left + cell * j
            v = None if a == b else values.get(a, {}).get(b)
            fill = "#eef0f4" if v is None else heat_colour(v)
            text = "" if v is None else f"{100 * v:.0f}%"
            ink = "#fff" if v is not None and abs(v - 0.5) > 0.35 else "#1d2433"
            tip = f"{a} vs {b}: " + ("-" if v is None else f"{100 * v:.1f}%")
            body.append(f'<g class="cell"><title>{escape(tip)}</title>'
                        f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(cell - 2)}" '
                        f'height="{_f(cell - 2)}" fill="{fill}" rx="3"/>'
                        f'<text x="{_f(x + cell / 2 - 1)}" y="{_f(y + cell / 2 + 4)}" '
                        f'text-anchor="middle" style="fill:{ink}">{text}</text></g>')
    return _svg(left + size + 10, top + size + 10, label, body)


def line_chart(series: Mapping[str, Sequence[tuple[float, float]]], *, x_label: str,
               y_label: str, hlines: Sequence[tuple[float, str]] = (),
               bands: Mapping[str, Sequence[tuple[float, float, float]]] | None = None,
               colours: Mapping[str, str] | None = None, width: float = 560,
               height: float = 300) -> str:
    """Lines of ``(x, y)`` points, one per series with a legend; optional horizontal
    reference lines ``(y, label)``, shaded bands ``(x, low, high)`` per series, and
    ``colours`` per series name (default: the palette in order)."""
    left, right, top, bottom = 56.0, 130.0, 12.0, 44.0
    xs = [p[0] for pts in series.values() for p in pts] or [0.0, 1.0]
    ys = [p[1] for pts in series.values() for p in pts] + [h[0] for h in hlines]
    for band_pts in (bands or {}).values():
        ys += [p[1] for p in band_pts] + [p[2] for p in band_pts]
    ys = ys or [0.0, 1.0]
    xt = nice_ticks(min(0.0, min(xs)), max(xs) if max(xs) > 0 else 1.0, integer=True)
    yt = nice_ticks(min(ys), max(ys) if max(ys) > min(ys) else min(ys) + 1)
    x = _Scale(xt[0], xt[-1], left, width - right)
    y = _Scale(yt[0], yt[-1], height - bottom, top)
    body = []
    for t in yt:
        body.append(f'<line x1="{_f(left)}" x2="{_f(width - right)}" y1="{_f(y(t))}" '
                    f'y2="{_f(y(t))}" stroke="#eef0f4"/><text x="{_f(left - 6)}" '
                    f'y="{_f(y(t) + 4)}" text-anchor="end">{t:g}</text>')
    for t in xt:
        body.append(f'<text x="{_f(x(t))}" y="{_f(height - bottom + 16)}" '
                    f'text-anchor="middle">{t:g}</text>')
    body.append(f'<text x="{_f((left + width - right) / 2)}" y="{_f(height - 6)}" '
                f'text-anchor="middle">{escape(x_label)}</text>'
                f'<text x="14" y="{_f((top + height - bottom) / 2)}" text-anchor="middle" '
                f'transform="rotate(-90 14 {_f((top + height - bottom) / 2)})">'
                f'{escape(y_label)}</text>')
    for value, text in hlines:
        body.append(f'<line x1="{_f(left)}" x2="{_f(width - right)}" y1="{_f(y(value))}" '
                    f'y2="{_f(y(value))}" stroke="#c0392b" stroke-dasharray="5 4"/>'
                    f'<text x="{_f(width - right + 4)}" y="{_f(y(value) + 4)}">'
                    f'{escape(text)}</text>')
    for i, (name, pts) in enumerate(series.items()):
        colour = (colours or {}).get(name, PALETTE[i % len(PALETTE)])
        band = (bands or {}).get(name)
        if band:
            outline = ([f"{_f(x(px))},{_f(y(hi))}" for px, _, hi in band]
                       + [f"{_f(x(px))},{_f(y(lo))}" for px, lo, _ in reversed(band)])
            body.append(f'<polygon points="{" ".join(outline)}" fill="{colour}" '
                        f'opacity=".12"/>')
        path = " ".join(f"{_f(x(px))},{_f(y(py))}" for px, py in pts)
        last = pts[-1] if pts else (0.0, 0.0)
        body.append(f'<g class="series" data-name="{escape(name)}"><title>{escape(name)}: '
                    f'{last[1]:.1f} at {last[0]:g}</title>'
                    f'<polyline points="{path}" fill="none" stroke="{colour}" '
                    f'stroke-width="2"/></g>')
        if len(pts) == 1:
            body.append(f'<circle cx="{_f(x(pts[0][0]))}" cy="{_f(y(pts[0][1]))}" r="3" '
                        f'fill="{colour}"/>')
        ly = top + 16 * i + 8
        if not hlines:
            body.append(f'<line x1="{_f(width - right + 8)}" x2="{_f(width - right + 26)}" '
                        f'y1="{_f(ly)}" y2="{_f(ly)}" stroke="{colour}" stroke-width="3"/>'
                        f'<text x="{_f(width - right + 30)}" y="{_f(ly + 4)}">'
                        f'{escape(name)}</text>')
    return _svg(width, height, f"{y_label} against {x_label}", body)


def _elo(x: float) -> str:
    """A rating as a signed whole number, never "-0" (a rating of -1e-14 is +0)."""
    return f"{round(x) + 0:+d}"
