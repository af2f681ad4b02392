"""Draw the recap page's figures: one Transformer-XL layer, and the shift, small.

    python scripts/draw_recap_figure.py   # book/figures/txl_layer.svg, txl_shift.svg

Both are drawn at the page's content width (7.25 in) with text of 9 pt or more, so they
read at 100 %. The shift panel is computed, not typed: its numbers come from
txl_mini.attention.rel_shift and causal_mask on a tensor of distances.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

from txl_mini.attention import causal_mask, rel_shift  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "book" / "figures"
WIDTH = 7.25  # inches: the book's content column
FS = 10  # points, the smallest text: >= 9 pt even where the page shows 7.25 in at 93 %
plt.rcParams.update(
    {
        "font.size": FS,
        "mathtext.fontset": "dejavusans",
        "svg.fonttype": "path",
        # stable ids: a redraw changes the file only when the drawing changes
        "svg.hashsalt": "txl-book",
    }
)

MEM, SEG, POS, ATT, OUTC, SGC, BIAS = (
    "#e4e4e4",
    "#d6e6f5",
    "#fff0c2",
    "#dff0d5",
    "#fbe0e3",
    "#c0392b",
    "#7b3fa0",
)


def box(ax, x0, y0, x1, y1, text, color, size=FS, weight="normal"):
    ax.add_patch(
        FancyBboxPatch(
            (x0, y0),
            x1 - x0,
            y1 - y0,
            boxstyle="round,pad=0,rounding_size=0.06",
            fc=color,
            ec="#444444",
            lw=0.8,
        )
    )
    ax.text(
        (x0 + x1) / 2,
        (y0 + y1) / 2,
        text,
        ha="center",
        va="center",
        fontsize=size,
        weight=weight,
        linespacing=1.25,
    )


def arrow(ax, *points, color="#333333", label=None, label_at=None, lw=1.1):
    """A polyline through `points` with an arrow head at the last one."""
    for a, b in zip(points[:-2], points[1:-1]):
        ax.plot([a[0], b[0]], [a[1], b[1]], color=color, lw=lw, solid_capstyle="butt")
    ax.annotate(
        "",
        xy=points[-1],
        xytext=points[-2],
        arrowprops=dict(
            arrowstyle="-|>,head_length=0.45,head_width=0.22",
            color=color,
            lw=lw,
            shrinkA=0,
            shrinkB=0,
        ),
    )
    if label:
        ax.text(
            *label_at, label, color=color, fontsize=FS + 0.5, ha="left", va="center"
        )


def draw_layer(path: Path) -> None:
    H = 9.1
    fig = plt.figure(figsize=(WIDTH, H))
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(-0.3, WIDTH - 0.3)
    ax.set_ylim(0, H)
    ax.axis("off")

    # rows, top to bottom (y of each row's bottom edge; every box is 0.55 high)
    y_next, y_in, y_cat, y_proj, y_terms, y_shift, y_soft, y_out, y_ff = (
        8.45,
        7.45,
        6.45,
        5.35,
        4.25,
        3.2,
        2.15,
        1.1,
        0.1,
    )
    h = 0.6

    # next segment's memory, formed from this layer's INPUT rows
    box(
        ax,
        0.0,
        y_next,
        4.3,
        y_next + h,
        r"next segment's memory $m^{n-1}_{\tau+1}$: last $M$ rows of "
        r"$[m^{n-1}_\tau \circ h^{n-1}_\tau]$",
        MEM,
    )
    # inputs
    box(ax, 0.0, y_in, 1.5, y_in + h, "memory $m^{n-1}_\\tau$\n$M$ earlier rows", MEM)
    ax.add_patch(plt.Circle((1.95, y_in + h / 2), 0.25, fc="white", ec=SGC, lw=1.4))
    ax.text(
        1.95,
        y_in + h / 2,
        "SG",
        color=SGC,
        ha="center",
        va="center",
        fontsize=FS,
        weight="bold",
    )
    box(ax, 2.45, y_in, 4.3, y_in + h, "segment $h^{n-1}_\\tau$\n$L$ rows", SEG)
    box(
        ax,
        4.75,
        y_in,
        6.95,
        y_in + h,
        "$R$: sinusoids, no parameters\ndistances $K-1, \\ldots, 1, 0$",
        POS,
    )
    arrow(ax, (0.75, y_in + h), (0.75, y_next))
    arrow(ax, (3.35, y_in + h), (3.35, y_next))
    arrow(ax, (1.5, y_in + h / 2), (1.7, y_in + h / 2))

    # concatenation: K = M + L rows
    box(
        ax,
        0.0,
        y_cat,
        3.3,
        y_cat + h,
        "$\\tilde h^{n-1}_\\tau = [\\mathrm{SG}(m^{n-1}_\\tau) \\circ h^{n-1}_\\tau]$\n"
        "$K = M + L$ rows",
        MEM,
    )
    arrow(ax, (1.95, y_in + h / 2 - 0.25), (1.95, y_cat + h))
    arrow(ax, (2.9, y_in), (2.9, y_cat + h))
    ax.text(
        2.0, y_in - 0.22, "no gradient", color=SGC, fontsize=FS, ha="left", va="center"
    )

    # projections
    box(
        ax,
        0.0,
        y_proj,
        1.5,
        y_proj + h,
        "values\n$\\tilde h^{n-1}_\\tau W_v^\\top$",
        ATT,
    )
    box(
        ax,
        1.65,
        y_proj,
        3.15,
        y_proj + h,
        "keys\n$\\tilde h^{n-1}_\\tau W_{k,E}^\\top$",
        ATT,
    )
    box(
        ax, 3.3, y_proj, 4.45, y_proj + h, "queries $q$\n$h^{n-1}_\\tau W_q^\\top$", SEG
    )
    box(ax, 4.75, y_proj, 6.95, y_proj + h, "position keys $W_{k,R} R$\n$K$ rows", POS)
    arrow(ax, (0.75, y_cat), (0.75, y_proj + h))
    arrow(ax, (2.4, y_cat), (2.4, y_proj + h))
    arrow(ax, (3.9, y_in), (3.9, y_proj + h))  # queries: the L segment rows only
    ax.text(3.97, y_cat + 0.3, "$L$ rows\nonly", fontsize=FS, ha="left", va="center")
    arrow(ax, (5.85, y_in), (5.85, y_proj + h))
    ax.text(
        5.93, y_cat + 0.3, "$W_{k,R}$ (no\nbias)", fontsize=FS, ha="left", va="center"
    )

    # the two products; u and v are added to the queries
    box(
        ax,
        0.0,
        y_terms,
        3.15,
        y_terms + h,
        "(a)+(c):  $(q_i + u)^\\top k_j$\n$L \\times K$",
        ATT,
    )
    box(
        ax,
        3.6,
        y_terms,
        6.95,
        y_terms + h,
        "(b)+(d):  $(q_i + v)^\\top W_{k,R} R_{K-1-k}$\n"
        "$L \\times K$, column $k$ in $R$'s row order",
        POS,
    )
    arrow(ax, (2.4, y_proj), (2.4, y_terms + h))
    arrow(
        ax,
        (3.55, y_proj),
        (2.95, y_terms + h),
        color=BIAS,
        label="$+u$",
        label_at=(3.0, y_terms + h + 0.32),
    )
    arrow(
        ax,
        (4.2, y_proj),
        (4.5, y_terms + h),
        color=BIAS,
        label="$+v$",
        label_at=(4.42, y_terms + h + 0.32),
    )
    arrow(ax, (5.85, y_proj), (5.85, y_terms + h))

    # the shift
    box(
        ax,
        2.9,
        y_shift,
        6.95,
        y_shift + h,
        "shift: pad a zero column, view as $(K{+}1) \\times L$,\n"
        "drop the first row, view as $L \\times K$: now $(i, j)$ uses $R_{i-j}$",
        POS,
    )
    arrow(ax, (5.3, y_terms), (5.3, y_shift + h))

    # scores -> mask -> softmax
    box(
        ax,
        0.0,
        y_soft,
        6.95,
        y_soft + h,
        "$A^{\\mathrm{rel}}_{i,j}$ = [(a)+(c) + shifted (b)+(d)] $/\\sqrt{D}$;   "
        "causal mask: key $j > M + i$ hidden;\nsoftmax over the $K$ keys, per head",
        ATT,
    )
    arrow(ax, (1.5, y_terms), (1.5, y_soft + h))
    arrow(ax, (5.3, y_shift), (5.3, y_soft + h))

    # weighted values, W_o, residual, LayerNorm
    box(
        ax,
        0.0,
        y_out,
        6.95,
        y_out + h,
        "weights $\\times$ values, heads concatenated, $W_o$;   "
        "$o^n_\\tau = \\mathrm{LayerNorm}(\\,\\cdot\\, + h^{n-1}_\\tau)$",
        ATT,
    )
    arrow(ax, (3.5, y_soft), (3.5, y_out + h))
    # values go round the left margin to where the weights meet them
    arrow(
        ax,
        (0.0, y_proj + h / 2),
        (-0.2, y_proj + h / 2),
        (-0.2, y_out + h / 2),
        (0.0, y_out + h / 2),
    )
    # feed-forward
    box(
        ax,
        0.0,
        y_ff,
        6.95,
        y_ff + h,
        "$h^n_\\tau = \\mathrm{LayerNorm}(\\mathrm{FF}(o^n_\\tau) + o^n_\\tau)$, "
        "$L$ rows: input of layer $n{+}1$;\nits last $M$ rows with $m^n_\\tau$ "
        "become $m^n_{\\tau+1}$",
        OUTC,
    )
    arrow(ax, (3.5, y_out), (3.5, y_ff + h))

    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)


def shift_example(L: int = 3, M: int = 2):
    """The three stages of rel_shift on distances; 0 marks the pad, d + 1 distance d."""
    K = M + L
    dist = torch.arange(K - 1, -1, -1, dtype=torch.float64).expand(L, K) + 1  # (L, K)
    padded = torch.cat([torch.zeros(L, 1, dtype=torch.float64), dist], dim=1)
    viewed = padded.reshape(K + 1, L)  # (K+1, L); its first row is dropped
    shifted = rel_shift(dist)  # (L, K), the package's function
    assert torch.equal(shifted, viewed[1:].reshape(L, K))
    hidden = causal_mask(L, M)  # (L, K), True = masked
    i = torch.arange(L)[:, None]
    j = torch.arange(K)[None, :]
    visible = ~hidden
    assert torch.equal(shifted[visible] - 1, (M + i - j).expand(L, K)[visible].double())
    return dist, viewed, shifted, hidden


def grid(ax, x0, y_top, values, title, cell=0.3, shade=None, drop_first=False):
    rows, cols = values.shape
    for r in range(rows):
        for c in range(cols):
            v = int(values[r, c])
            color = "white"
            if shade is not None and shade[r, c]:
                color = "#bdbdbd"
            if drop_first and r == 0:
                color = "#f4c7c3"
            x, y = x0 + c * cell, y_top - (r + 1) * cell
            ax.add_patch(
                plt.Rectangle((x, y), cell, cell, fc=color, ec="#555555", lw=0.7)
            )
            ax.text(
                x + cell / 2,
                y + cell / 2,
                "p" if v == 0 else str(v - 1),
                ha="center",
                va="center",
                fontsize=FS,
            )
    ax.text(x0, y_top + 0.12, title, ha="left", va="bottom", fontsize=FS)


def draw_shift(path: Path) -> None:
    L, M = 3, 2
    dist, viewed, shifted, hidden = shift_example(L, M)
    H = 2.85
    fig = plt.figure(figsize=(WIDTH, H))
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, WIDTH)
    ax.set_ylim(0, H)
    ax.axis("off")
    top, mid = 2.3, 1.6
    grid(ax, 0.15, top, dist, "(b)+(d) as computed:\ncolumn $k$ has distance $K-1-k$")
    ax.text(
        0.15,
        top - L * 0.3 - 0.2,
        f"$L = {L}$, $M = {M}$, $K = {M + L}$;\n"
        "numbers are distances,\np is the zero pad",
        ha="left",
        va="top",
        fontsize=FS,
    )
    ax.annotate(
        "", xy=(2.55, mid), xytext=(1.8, mid), arrowprops=dict(arrowstyle="-|>")
    )
    ax.text(2.17, mid + 0.12, "pad p,\nview", ha="center", va="bottom", fontsize=FS)
    grid(
        ax,
        2.7,
        top,
        viewed,
        "$(K{+}1) \\times L$ view;\nfirst row dropped",
        drop_first=True,
    )
    ax.annotate(
        "", xy=(4.55, mid), xytext=(3.8, mid), arrowprops=dict(arrowstyle="-|>")
    )
    ax.text(
        4.17, mid + 0.12, "view\n$L \\times K$", ha="center", va="bottom", fontsize=FS
    )
    grid(
        ax,
        4.7,
        top,
        shifted,
        "after the shift: entry $(i, j)$\nhas distance $M + i - j$",
        shade=hidden,
    )
    ax.text(
        4.7,
        top - L * 0.3 - 0.2,
        "grey: keys $j > M + i$, junk\nthat the causal mask hides\n"
        "(drawn with txl_mini's\nrel_shift and causal_mask)",
        ha="left",
        va="top",
        fontsize=FS,
    )
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    draw_layer(OUT / "txl_layer.svg")
    draw_shift(OUT / "txl_shift.svg")
    for name in ("txl_layer.svg", "txl_shift.svg"):
        print(OUT / name)
