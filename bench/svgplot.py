#!/usr/bin/python3
"""Minimal SVG line charts for the benchmark reports (Python standard library only).

A figure is a grid of panels sharing one legend. Each panel has its own axes; the x axis may be
logarithmic with ticks at given values (connection counts), the y axis linear from zero or
logarithmic. Series are lines with markers; a point can be drawn hollow (e.g. a fixed-rate point
that was not sustained) and a series dashed (e.g. the larger data set of the same server).

    import svgplot
    panel = svgplot.Panel("GET", "connections", "ops/s", x_log=True, x_ticks=[16, 32, 80])
    panel.add("lavik / 1M", [(16, 30000), (32, 52000), (80, 61000)], color=svgplot.COLORS[0])
    open("chart.svg", "w").write(svgplot.figure([panel], title="throughput"))

`python3 bench/svgplot.py demo OUT.svg` writes a sample figure.
"""

import math
import sys
from xml.sax.saxutils import escape

# Colour-blind-safe palette (Okabe-Ito), one colour per server.
COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
DASHES = ["", "7 4", "2 3", "10 3 2 3"]
FONT = "DejaVu Sans, Arial, Helvetica, sans-serif"


class Series:
    def __init__(self, label, points, color, dash="", width=2.0):
        # points: (x, y) or (x, y, hollow); points with y None are skipped.
        self.label = label
        self.points = [p if len(p) == 3 else (p[0], p[1], False) for p in points]
        self.points = [p for p in self.points if p[1] is not None]
        self.color = color
        self.dash = dash
        self.width = width


class Panel:
    def __init__(self, title, x_label, y_label, x_log=False, x_ticks=None, y_log=False,
                 y_unit="", x_plain=False, y_plain=False):
        self.title = title
        self.x_label = x_label
        self.y_label = y_label
        self.x_log = x_log
        self.x_ticks = x_ticks
        self.y_log = y_log
        self.y_unit = y_unit
        self.x_plain = x_plain  # x tick labels as plain integers (1280, not 1.28k)
        self.y_plain = y_plain  # y tick labels as plain numbers (2000 ms, not 2k)
        self.series = []

    def add(self, label, points, color, dash=""):
        self.series.append(Series(label, points, color, dash))


def nice_step(span, target):
    """A step of 1, 2, 2.5 or 5 times a power of ten giving about `target` intervals."""
    if span <= 0:
        return 1.0
    raw = span / target
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def linear_ticks(hi, target=5):
    step = nice_step(hi, target)
    top = step * math.ceil(hi / step - 1e-9)
    n = int(round(top / step))
    return [i * step for i in range(n + 1)], top


def log_ticks(lo, hi):
    """Decades and their 2x / 5x between lo and hi (both > 0); the range is widened to them."""
    lo_e = math.floor(math.log10(lo))
    hi_e = math.ceil(math.log10(hi))
    ticks = []
    for e in range(lo_e, hi_e + 1):
        for m in (1, 2, 5):
            v = m * 10 ** e
            if lo / 1.0001 <= v * 2.5 and v / 2.5 <= hi * 1.0001:
                ticks.append(v)
    ticks = [t for t in ticks if t >= lo / 2.5 and t <= hi * 2.5]
    return ticks, min(ticks[0], lo), max(ticks[-1], hi)


def fmt_num(v):
    """Compact tick label: 250000 -> 250k, 1500000 -> 1.5M, 0.25 -> 0.25."""
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e6:
        s, suf = v / 1e6, "M"
    elif a >= 1e3:
        s, suf = v / 1e3, "k"
    else:
        s, suf = v, ""
    text = ("%.3f" % s).rstrip("0").rstrip(".")
    return text + suf


class _Canvas:
    def __init__(self):
        self.parts = []

    def add(self, s):
        self.parts.append(s)

    def text(self, x, y, s, size=12, anchor="start", weight="normal", rotate=None, fill="#222"):
        tr = ' transform="rotate(%d %.1f %.1f)"' % (rotate, x, y) if rotate else ""
        self.add('<text x="%.1f" y="%.1f" font-size="%d" text-anchor="%s" font-weight="%s" '
                 'fill="%s"%s>%s</text>' % (x, y, size, anchor, weight, fill, tr, escape(s)))

    def line(self, x1, y1, x2, y2, stroke="#222", width=1.0, dash=""):
        d = ' stroke-dasharray="%s"' % dash if dash else ""
        self.add('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.1f"%s/>'
                 % (x1, y1, x2, y2, stroke, width, d))


def _draw_panel(cv, panel, x0, y0, w, h):
    """Draws one panel with its plot area at (x0, y0) of size w x h."""
    pts = [p for s in panel.series for p in s.points]
    cv.text(x0 + w / 2, y0 - 10, panel.title, size=14, anchor="middle", weight="bold")
    cv.add('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#fff" stroke="#888"/>'
           % (x0, y0, w, h))
    if not pts:
        cv.text(x0 + w / 2, y0 + h / 2, "no data", anchor="middle", fill="#888")
        return
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]

    # x mapping
    if panel.x_log:
        lo, hi = min(xs), max(xs)
        if panel.x_ticks:
            lo, hi = min(lo, min(panel.x_ticks)), max(hi, max(panel.x_ticks))
        pad = (math.log(hi) - math.log(lo)) * 0.04 or 0.5
        lx0, lx1 = math.log(lo) - pad, math.log(hi) + pad

        def fx(v):
            return x0 + (math.log(v) - lx0) / (lx1 - lx0) * w

        xt = panel.x_ticks or log_ticks(lo, hi)[0]
    else:
        if panel.x_ticks:
            xt = panel.x_ticks
            top = max(max(xs), max(xt))
        else:
            xt, top = linear_ticks(max(xs), 6)

        def fx(v):
            return x0 + v / top * w if top else x0

    # y mapping
    if panel.y_log:
        pos = [y for y in ys if y > 0] or [1.0]
        yt, ylo, yhi = log_ticks(min(pos), max(pos))
        ly0, ly1 = math.log(ylo), math.log(yhi)
        if ly1 == ly0:
            ly1 = ly0 + 1

        def fy(v):
            v = max(v, ylo)
            return y0 + h - (math.log(v) - ly0) / (ly1 - ly0) * h
    else:
        yt, ytop = linear_ticks(max(ys) * 1.05 if max(ys) > 0 else 1.0)

        def fy(v):
            return y0 + h - v / ytop * h

    for t in yt:
        y = fy(t)
        cv.line(x0, y, x0 + w, y, stroke="#e4e4e4")
        cv.line(x0 - 4, y, x0, y, stroke="#444")
        cv.text(x0 - 7, y + 4, "%g" % t if panel.y_plain else fmt_num(t), size=11, anchor="end")
    for t in xt:
        x = fx(t)
        cv.line(x, y0, x, y0 + h, stroke="#f0f0f0")
        cv.line(x, y0 + h, x, y0 + h + 4, stroke="#444")
        label = "%d" % t if panel.x_plain else fmt_num(t)
        cv.text(x, y0 + h + 17, label, size=11, anchor="middle")
    cv.text(x0 + w / 2, y0 + h + 36, panel.x_label, size=12, anchor="middle")
    cv.text(x0 - 52, y0 + h / 2, panel.y_label, size=12, anchor="middle", rotate=-90)

    cv.add('<g clip-path="none">')
    for s in panel.series:
        if not s.points:
            continue
        path = " ".join("%s%.1f,%.1f" % ("M" if i == 0 else "L", fx(p[0]), fy(p[1]))
                        for i, p in enumerate(s.points))
        dash = ' stroke-dasharray="%s"' % s.dash if s.dash else ""
        cv.add('<path d="%s" fill="none" stroke="%s" stroke-width="%.1f" stroke-linejoin="round"%s/>'
               % (path, s.color, s.width, dash))
        for x, y, hollow in s.points:
            cv.add('<circle cx="%.1f" cy="%.1f" r="3.2" fill="%s" stroke="%s" stroke-width="1.5">'
                   '<title>%s: %s, %s</title></circle>'
                   % (fx(x), fy(y), "#fff" if hollow else s.color, s.color, escape(s.label),
                      fmt_num(x), ("%.4g" % y) + panel.y_unit))
    cv.add("</g>")


def figure(panels, title="", subtitle="", cols=2, panel_w=420, panel_h=260, note=""):
    """The SVG document for `panels` laid out in `cols` columns with one shared legend."""
    cols = max(1, min(cols, len(panels)))
    rows = (len(panels) + cols - 1) // cols
    left, right, gap_x = 78, 24, 96
    top = 46 + (18 if subtitle else 0) + 28
    gap_y = 84
    # Legend: unique (label, colour, dash) across panels, in order of first appearance.
    legend = []
    for p in panels:
        for s in p.series:
            key = (s.label, s.color, s.dash)
            if key not in legend:
                legend.append(key)
    per_row = max(1, (cols * panel_w + (cols - 1) * gap_x) // 230)
    legend_rows = (len(legend) + per_row - 1) // per_row
    width = left + cols * panel_w + (cols - 1) * gap_x + right
    height = top + rows * panel_h + (rows - 1) * gap_y + 56 + legend_rows * 20 + (20 if note else 0)

    cv = _Canvas()
    cv.add('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
           'font-family="%s">' % (width, height, width, height, FONT))
    cv.add('<rect width="100%" height="100%" fill="#ffffff"/>')
    if title:
        cv.text(width / 2, 26, title, size=17, anchor="middle", weight="bold")
    if subtitle:
        cv.text(width / 2, 46, subtitle, size=12, anchor="middle", fill="#555")
    for i, p in enumerate(panels):
        r, c = divmod(i, cols)
        _draw_panel(cv, p, left + c * (panel_w + gap_x), top + r * (panel_h + gap_y), panel_w,
                    panel_h)
    ly = top + rows * panel_h + (rows - 1) * gap_y + 58
    for i, (label, color, dash) in enumerate(legend):
        r, c = divmod(i, per_row)
        lx = left + c * 230
        y = ly + r * 20
        d = ' stroke-dasharray="%s"' % dash if dash else ""
        cv.add('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2.5"%s/>'
               % (lx, y - 4, lx + 30, y - 4, color, d))
        cv.add('<circle cx="%d" cy="%d" r="3.2" fill="%s"/>' % (lx + 15, y - 4, color))
        cv.text(lx + 38, y, label, size=12)
    if note:
        cv.text(left, height - 10, note, size=11, fill="#555")
    cv.add("</svg>")
    return "\n".join(cv.parts) + "\n"


def _demo(path):
    conns = [16, 32, 80, 160, 320, 640, 1280]
    a = Panel("GET throughput", "connections", "ops/s", x_log=True, x_ticks=conns, x_plain=True)
    b = Panel("GET p99 at a fixed rate", "offered ops/s", "ms", y_log=True, y_unit=" ms")
    for i, (name, peak) in enumerate([("server A / 1M", 60000), ("server B / 1M", 52000)]):
        a.add(name, [(c, peak * min(1, c / 100)) for c in conns], COLORS[i])
        a.add(name.replace("1M", "10M"), [(c, 0.9 * peak * min(1, c / 100)) for c in conns],
              COLORS[i], DASHES[1])
        b.add(name, [(r, 0.2 + 30 * max(0, r / peak - 0.9) ** 2 * 100, r > peak)
                     for r in range(10000, 80001, 10000)], COLORS[i])
    with open(path, "w") as f:
        f.write(figure([a, b], title="svgplot demo", subtitle="made-up numbers",
                       note="hollow marker: rate not sustained"))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "demo":
        _demo(sys.argv[2])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)
