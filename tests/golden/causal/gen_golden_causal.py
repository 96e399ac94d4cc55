#!/usr/bin/env python3
"""Golden fixtures of the stateful causal conv1d (SPEC §13) from a pure-PyTorch reference:
causal_conv1d_ref / causal_conv1d_update_ref as users write them (Dao-AILab/causal-conv1d's
reference functions: F.conv1d over cat(initial_states, x), the state as the last W-1 inputs;
the update over cat(conv_state, x) with an optional circular cache_seqlens), in float64.

Same files as ../gen_golden.py: cases.txt (`name key=value ...`), inputs.f32 and expected.f64.
Keys: kind=fwd|update B D L W layout=bdl|bld bias silu; fwd: init (0/1), final (0/1),
qsl (offsets, packed batch) ; update: SL (state_len) ring (0/1) seen (cache_seqlens list)
idx (conv_state_indices list) rows. Offsets into inputs.f32: xo wo bo so (initial_states or
conv_state); into expected.f64: yo fo (final_states, or the updated conv_state).
x and y are stored in the case's layout. Run: python3 gen_golden_causal.py (writes next to it).
"""
import os
import torch
import torch.nn.functional as F

SEED = 20261130
HERE = os.path.dirname(os.path.abspath(__file__))


def causal_conv1d_ref(x, weight, bias=None, initial_states=None, silu=False):
    """x (B, D, L), weight (D, W): (y, final_states)."""
    width = weight.shape[1]
    seqlen = x.shape[-1]
    if initial_states is None:
        initial_states = torch.zeros(x.shape[0], x.shape[1], width - 1, dtype=x.dtype)
    xx = torch.cat([initial_states, x], dim=-1)
    if seqlen == 0:  # conv1d refuses an input shorter than the kernel
        return x.clone(), xx
    out = F.conv1d(xx, weight.unsqueeze(1), bias, padding=0, groups=weight.shape[0])[..., :seqlen]
    final_states = xx[..., xx.shape[-1] - (width - 1):]
    return (F.silu(out) if silu else out), final_states


def causal_conv1d_update_ref(x, conv_state, weight, bias=None, silu=False, cache_seqlens=None,
                             idx=None):
    """x (B, D, Ln), conv_state (rows, D, SL), updated in place; returns y (B, D, Ln)."""
    B, D, Ln = x.shape
    W = weight.shape[1]
    SL = conv_state.shape[-1]
    y = torch.zeros_like(x)
    for b in range(B):
        row = b if idx is None else idx[b]
        if row < 0:
            continue
        st = conv_state[row]
        if cache_seqlens is None:
            xx = torch.cat([st, x[b]], dim=-1)  # (D, SL + Ln)
            conv_state[row] = xx[:, Ln:]
        else:
            seen = cache_seqlens[b]
            order = [(seen - SL + j) % SL for j in range(SL)]  # oldest first
            xx = torch.cat([st[:, order], x[b]], dim=-1)
            for j in range(Ln):
                st[:, (seen + j) % SL] = x[b][:, j]
        out = F.conv1d(xx[None, :, SL - (W - 1):], weight.unsqueeze(1), bias, groups=D)[0]
        y[b] = F.silu(out) if silu else out
    return y


def main():
    g = torch.Generator().manual_seed(SEED)
    inputs, expected, lines = [], [], []

    def rnd(*shape):
        t = (torch.rand(*shape, generator=g, dtype=torch.float64) * 2 - 1).to(torch.float32)
        return t.to(torch.float64)

    def put_in(t):
        off = sum(v.numel() for v in inputs)
        inputs.append(t.reshape(-1).to(torch.float32))
        return off

    def put_out(t):
        off = sum(v.numel() for v in expected)
        expected.append(t.reshape(-1).to(torch.float64))
        return off

    def lay(t, layout):  # (B, D, L) -> stored layout
        return t if layout == "bdl" else t.transpose(1, 2).contiguous()

    fwd = [  # B, D, L, W, layout, bias, silu, init, final, seq lengths (packed) or None
        (2, 5, 9, 2, "bdl", 0, 0, 0, 0, None),
        (2, 6, 20, 4, "bld", 1, 1, 1, 1, None),
        (1, 3, 2, 4, "bdl", 1, 0, 1, 1, None),
        (3, 4, 70, 3, "bld", 0, 1, 0, 1, None),
        (1, 8, 33, 33, "bdl", 1, 1, 1, 1, None),
        (1, 4, 0, 5, "bdl", 1, 1, 0, 0, [4, 0, 1, 9]),
        (1, 5, 0, 4, "bld", 1, 1, 1, 1, [3, 7, 0, 2]),
    ]
    for i, (B, D, L, W, layout, hb, silu, init, fin, lens) in enumerate(fwd):
        if lens is not None:
            L = sum(lens)
        x, w = rnd(B, D, L), rnd(D, W)
        b = rnd(D) if hb else None
        S = len(lens) if lens is not None else B
        s0 = rnd(S, D, W - 1) if init else None
        if lens is None:
            y, fs = causal_conv1d_ref(x, w, b, s0, bool(silu))
        else:  # packed: each sequence on its own
            ys, fss, t0 = [], [], 0
            for s, n in enumerate(lens):
                ys_, fs_ = causal_conv1d_ref(x[:, :, t0:t0 + n], w, b,
                                             None if s0 is None else s0[s:s + 1], bool(silu))
                ys.append(ys_)
                fss.append(fs_)
                t0 += n
            y, fs = torch.cat(ys, dim=-1), torch.cat(fss, dim=0)
        f = dict(kind="fwd", B=B, D=D, L=L, W=W, layout=layout, bias=hb, silu=silu, init=init,
                 final=fin, xo=put_in(lay(x, layout)), wo=put_in(w),
                 bo=put_in(b) if hb else -1, so=put_in(s0) if init else -1,
                 yo=put_out(lay(y, layout)), fo=put_out(fs) if fin else -1)
        if lens is not None:
            f["qsl"] = ",".join(str(v) for v in [0] + list(torch.tensor(lens).cumsum(0).tolist()))
        lines.append(f"causal_fwd_{i:02d} " + " ".join(f"{k}={v}" for k, v in f.items()))

    upd = [  # B, D, Ln, W, layout, bias, silu, SL, ring, seen, idx, rows
        (2, 5, 1, 4, "bdl", 1, 1, 3, 0, None, None, 2),
        (2, 6, 3, 4, "bld", 0, 1, 5, 0, None, [1, 0], 2),
        (3, 4, 2, 5, "bdl", 1, 0, 4, 1, [0, 6, 13], [2, -1, 0], 3),
        (1, 7, 1, 3, "bld", 1, 1, 8, 1, [21], None, 1),
    ]
    for i, (B, D, Ln, W, layout, hb, silu, SL, ring, seen, idx, rows) in enumerate(upd):
        x, w = rnd(B, D, Ln), rnd(D, W)
        b = rnd(D) if hb else None
        st = rnd(rows, D, SL)
        f = dict(kind="update", B=B, D=D, L=Ln, W=W, layout=layout, bias=hb, silu=silu, SL=SL,
                 rows=rows, ring=ring, seen=",".join(map(str, seen)) if seen else "-",
                 idx=",".join(map(str, idx)) if idx else "-", xo=put_in(lay(x, layout)),
                 wo=put_in(w), bo=put_in(b) if hb else -1, so=put_in(st))
        st2 = st.clone()
        y = causal_conv1d_update_ref(x, st2, w, b, bool(silu), seen, idx)
        f["yo"] = put_out(lay(y, layout))
        f["fo"] = put_out(st2)
        lines.append(f"causal_update_{i:02d} " + " ".join(f"{k}={v}" for k, v in f.items()))

    with open(os.path.join(HERE, "cases.txt"), "w") as fh:
        fh.write(f"# generated by gen_golden_causal.py (seed {SEED}, torch {torch.__version__})\n")
        fh.write("\n".join(lines) + "\n")
    torch.cat(inputs).numpy().astype("<f4").tofile(os.path.join(HERE, "inputs.f32"))
    torch.cat(expected).numpy().astype("<f8").tofile(os.path.join(HERE, "expected.f64"))
    print(f"{len(lines)} cases")


if __name__ == "__main__":
    main()
