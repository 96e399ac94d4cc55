"""Spatial parallelism on torch.distributed (SPEC section 14): one convolution sharded along a
spatial axis across the ranks of a process group, each rank holding a contiguous shard of the
input rows (uneven shards allowed) and computing the output rows whose windows start in it.

The rows each rank computes and reads, its halo sizes and its own padding come from the C
library's rule (convnd_shard_rows, convnd_shard_rows_aligned and convnd_shard_part through
convnd._C), never from Python arithmetic. Two row rules: rows="window" (SPEC section 14: a rank
computes the output rows whose windows start in its shard; its halo is a suffix only) and
rows="aligned" (output rows [ceil(b*O/I), ceil(e*O/I)) of shard [b, e): a "same" conv keeps the
input's rows, so a chain of convs with residual adds and nearest upsampling keeps one row
partition; halos on both sides); parallelize() uses "aligned". The halo rows travel with torch.distributed's point-to-point ops (batch_isend_irecv:
NCCL on GPUs, gloo on CPUs) as contiguous slabs packed in the input's layout, and the conv reads
them as its prefix and suffix (torch.ops.convnd.conv_nd_halo): the shard itself is read in place,
never concatenated. The forward overlaps the exchange with the interior rows (those whose windows
lie inside the shard): they are computed, into the output, while the halo is in flight; the
rows before and after them once it has arrived, each a launch reading the shard's rows it needs
as a view. Every output row is
computed by exactly one launch with the same per-row arithmetic as the whole conv, so the
result is the whole convolution's bit for bit when every rank runs the same schedule and
configuration as the whole (pass schedule="name:config" to pin it).

The backward exchanges the halo rows' data gradient the opposite way and adds it into the
owners' gradient; the weight and bias gradients are all-reduced over the group. The backward's
weight gradient reads cat(prefix, shard, suffix) (a copy: CONVND_WGRAD reads no halo).
"""
import torch
import torch.distributed as dist
from torch import nn

from . import _C, _ops

__all__ = ["halo_conv", "shard_rows", "shard_sizes", "parallelize", "ShardedConv",
           "ShardedCausalConv", "ShardedGroupNorm"]

_halo = torch.ops.convnd.conv_nd_halo.default
_halo_out = torch.ops.convnd.conv_nd_halo_out.default
_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]


def _tuple(v, n, name):
    if isinstance(v, int):
        return [v] * n
    v = list(v)
    if len(v) != n:
        raise ValueError(f"convnd.distributed: {name}={v} must have {n} entries (one per spatial "
                         "dim)")
    return v


def shard_sizes(total, parts):
    """Contiguous shard sizes of `total` rows over `parts` ranks, as torch.tensor_split makes
    them (the first total % parts ranks one row more)."""
    return [total // parts + (1 if r < total % parts else 0) for r in range(parts)]


def _packed_strides(t, channels_last):
    order = [0, *range(2, t.dim()), 1] if channels_last else list(range(t.dim()))
    expect = 1
    for d in reversed(order):
        if t.stride(d) != expect:
            return False
        expect *= t.size(d)
    return True


def _channels_last(x):
    """x's layout as the op reads it (the C++ op's view_layout_of, rule for rule): exact
    channels-first strides, then exact channels-last ones, else channels-last when C has the
    smallest stride. The halo slabs travel and land in this layout, so every rank must agree."""
    if _packed_strides(x, False):
        return False
    if _packed_strides(x, True):
        return True
    if any(x.size(d) > 1 and x.stride(d) <= x.stride(1) for d in range(2, x.dim())):
        return False
    return x.size(1) > 1


def _empty(shape, channels_last, like):
    """A packed tensor of logical shape [N, C, spatial...] in the given layout."""
    if not channels_last:
        return torch.empty(shape, dtype=like.dtype, device=like.device)
    stored = torch.empty([shape[0], *shape[2:], shape[1]], dtype=like.dtype, device=like.device)
    return stored.permute(0, len(shape) - 1, *range(1, len(shape) - 1))


def _packed(t, channels_last):
    """t packed in the layout (a copy unless it already is)."""
    out = _empty(list(t.shape), channels_last, t)
    out.copy_(t)
    return out


def _gather_shapes(x, group, dim):
    """Every rank's x shape, dtype and layout, checked: the same rank, dtype, layout and sizes but
    along dim on every rank, else ValueError on every rank (they all see the same table, so none
    waits)."""
    world = dist.get_world_size(group)
    if world < 2:
        raise ValueError(f"convnd.distributed: the group has {world} rank(s); sharding needs at "
                         "least 2 (run the conv itself on one rank)")
    if not 2 <= dim < x.dim():
        raise ValueError(f"convnd.distributed: dim={dim} must name a spatial dim of x of shape "
                         f"{list(x.shape)} (2..{x.dim() - 1})")
    code = _DTYPES.index(x.dtype) if x.dtype in _DTYPES else -1
    mine = torch.tensor([x.dim(), code, int(_channels_last(x)), *x.shape] + [0] * (7 - x.dim()),
                        dtype=torch.int64, device=x.device)
    table = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(table, mine, group=group)
    rows = [t.tolist() for t in table]
    shapes = [r[3:3 + r[0]] for r in rows]
    other = [s[:dim] + s[dim + 1:] for s in shapes]
    if any(r[:3] != rows[0][:3] for r in rows) or any(o != other[0] for o in other):
        names = [(str(_DTYPES[r[1]]) if 0 <= r[1] < len(_DTYPES) else "?") +
                 (" channels-last" if r[2] else " channels-first") for r in rows]
        listing = ", ".join(f"rank {i}: {s} {names[i]}" for i, s in enumerate(shapes))
        raise ValueError("convnd.distributed: the shards must have the same rank, dtype, layout "
                         f"and sizes but along dim {dim}: {listing}")
    return [s[dim] for s in shapes]


class _Exchange:
    """Who sends which rows to whom, from the C rule for every rank: rank r reads rows
    [x_begin - prefix, x_begin) and [x_end, x_end + suffix) of the whole input from the ranks
    that hold them (several when a shard is smaller than the halo)."""

    def __init__(self, sizes, rank, axis_args, aligned):
        self.sizes, self.rank, self.axis_args = sizes, rank, axis_args
        self.starts = [sum(sizes[:r]) for r in range(len(sizes))]
        total = sum(sizes)
        self.rows = [_C.shard_rows(total, *axis_args, self.starts[r], sizes[r], aligned)
                     for r in range(len(sizes))]
        self.sends, self.recvs = [], []  # (peer, tag, lo, hi, where, offset)

        def pieces(r):  # (tag, lo, hi, where, offset in that halo) of rank r's halo rows
            s = self.rows[r]
            out = []
            if s["prefix"]:
                out.append((0, s["x_begin"] - s["prefix"], s["x_begin"], "prefix"))
            if s["suffix"]:
                out.append((1, s["x_end"], s["x_end"] + s["suffix"], "suffix"))
            return out

        for r in range(len(sizes)):
            for tag, lo, hi, where in pieces(r):
                for q in range(len(sizes)):
                    a = max(lo, self.starts[q])
                    b = min(hi, self.starts[q] + sizes[q])
                    if a >= b or q == r:
                        continue
                    if r == rank:
                        self.recvs.append((q, tag, a, b, where, a - lo))
                    elif q == rank:
                        self.sends.append((r, tag, a, b, where, a - lo))

    @property
    def mine(self):
        return self.rows[self.rank]

    def part(self, out_begin, out_end):
        """This rank's output rows [out_begin, out_end) as their own problem (C rule)."""
        return _C.shard_part(sum(self.sizes), *self.axis_args, self.starts[self.rank],
                             self.sizes[self.rank], out_begin, out_end)


def _wire(t):
    """t as the contiguous tensor of its memory (torch.distributed sends and receives only
    contiguous tensors): a channels-last [N, C, spatial...] one as [N, spatial..., C]."""
    if t.is_contiguous():
        return t
    stored = t.permute(0, *range(2, t.dim()), 1)
    assert stored.is_contiguous(), "a halo buffer is packed in one of the two layouts"
    return stored


def _p2p(op, t, peer, group, tag):
    return dist.P2POp(op, _wire(t), peer, group, tag)


def _post(ops):
    return dist.batch_isend_irecv(ops) if ops else []


def _slab(t, dim, lo, n, channels_last):
    return _packed(t.narrow(dim, lo, n), channels_last)


class _HaloConv(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b, dim, group, ex, conv, schedule, overlap, out):
        axis = dim - 2
        cl = _channels_last(x)
        me, start = ex.mine, ex.starts[ex.rank]
        gr = lambda r: dist.get_global_rank(group, r) if group is not None else r  # noqa: E731
        # the halo buffers, packed in x's layout; a single sender receives straight into them
        halo = {}
        for where in ("prefix", "suffix"):
            if me[where]:
                shape = list(x.shape)
                shape[dim] = me[where]
                halo[where] = _empty(shape, cl, x)
        ops, landing = [], []
        for peer, tag, lo, hi, where, off in ex.recvs:
            whole = hi - lo == me[where]
            buf = halo[where] if whole else _empty(
                [*x.shape[:dim], hi - lo, *x.shape[dim + 1:]], cl, x)
            ops.append(_p2p(dist.irecv, buf, gr(peer), group, tag))
            if not whole:
                landing.append((buf, where, off))
        keep = []
        for peer, tag, lo, hi, where, off in ex.sends:
            slab = _slab(x, dim, lo - start, hi - lo, cl)
            keep.append(slab)
            ops.append(_p2p(dist.isend, slab, gr(peer), group, tag))
        works = _post(ops)

        rows = me["out_end"] - me["out_begin"]
        stride, dilation, pb, pa, groups = conv
        if out is None:
            # the whole conv's output shape from the C rule (the op's Meta kernel on the whole
            # input's shape), this rank's rows along dim
            whole = list(x.shape)
            whole[dim] = sum(ex.sizes)
            shape = list(torch.ops.convnd.conv_nd(
                torch.empty(whole, device="meta", dtype=x.dtype), w.to("meta"), None, None,
                stride, dilation, pb, pa, groups).shape)
            shape[dim] = rows
            y = _empty(shape, cl or _channels_last(w), x)
        else:
            y = out
            if y.shape[dim] != rows:
                raise ValueError(f"convnd.distributed: out has {y.shape[dim]} rows along dim "
                                 f"{dim}; this rank computes {rows}")

        def launch(part, into):
            p0, p1 = list(pb), list(pa)
            p0[axis], p1[axis] = part["pad_before"], part["pad_after"]
            xv = x.narrow(dim, part["x_begin"] - start, part["x_end"] - part["x_begin"])
            # a part's halo: the prefix's last rows, the suffix's first (views of the buffers)
            pre = halo["prefix"].narrow(dim, me["prefix"] - part["prefix"], part["prefix"]) \
                if part["prefix"] else None
            suf = halo["suffix"].narrow(dim, 0, part["suffix"]) if part["suffix"] else None
            _halo_out(xv, w, b, pre, suf, axis, stride, dilation, p0, p1, groups, 0, schedule,
                      into)

        def rows_of(lo, hi):  # this rank's output rows [lo, hi), a launch; lo == hi: none
            if lo < hi:
                part = me if (lo, hi) == (me["out_begin"], me["out_end"]) else ex.part(lo, hi)
                launch(part, y.narrow(dim, lo - me["out_begin"], hi - lo))

        ib, ie = me["interior_begin"], me["interior_end"]
        split = overlap and rows > 0 and works and ib < ie
        if split:  # the interior while the halo is in flight
            rows_of(ib, ie)
        for wk in works:
            wk.wait()
        for buf, where, off in landing:
            halo[where].narrow(dim, off, buf.shape[dim]).copy_(buf)
        if split:  # then the rows before and after it
            rows_of(me["out_begin"], ib)
            rows_of(ie, me["out_end"])
        else:
            rows_of(me["out_begin"], me["out_end"])
        ctx.save_for_backward(x, w, halo.get("prefix", x.new_empty(0)),
                              halo.get("suffix", x.new_empty(0)))
        ctx.args = (dim, group, ex, conv, b is not None)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w, prefix, suffix = ctx.saved_tensors
        dim, group, ex, conv, has_bias = ctx.args
        stride, dilation, pb, pa, groups = conv
        axis = dim - 2
        me, start = ex.mine, ex.starts[ex.rank]
        cl = _channels_last(x)
        gr = lambda r: dist.get_global_rank(group, r) if group is not None else r  # noqa: E731
        rows = me["out_end"] - me["out_begin"]
        dx = torch.zeros_like(x)
        dw = torch.zeros_like(w)
        db = torch.zeros(w.shape[0], dtype=w.dtype, device=w.device) if has_bias else None
        dhalo = {}
        if rows > 0:
            xr = x.narrow(dim, me["x_begin"] - start, me["x_end"] - me["x_begin"])
            parts = [t for t in (prefix if me["prefix"] else None, xr,
                                 suffix if me["suffix"] else None) if t is not None]
            X = torch.cat(parts, dim=dim) if len(parts) > 1 else xr
            p0, p1 = list(pb), list(pa)
            p0[axis], p1[axis] = me["pad_before"], me["pad_after"]
            dX = _ops.data_grad(dy, w, list(X.shape[2:]), stride, dilation, p0, p1, groups,
                                _ops.FORWARD)
            dw = _ops.conv_nd_wgrad(X, dy, list(w.shape), stride=stride, dilation=dilation,
                                    padding_before=p0, padding_after=p1, groups=groups,
                                    schedule=None)
            if has_bias:
                db = dy.sum(dim=[d for d in range(dy.dim()) if d != 1])
            n = xr.shape[dim]
            dx.narrow(dim, me["x_begin"] - start, n).add_(dX.narrow(dim, me["prefix"], n))
            if me["prefix"]:
                dhalo["prefix"] = dX.narrow(dim, 0, me["prefix"])
            if me["suffix"]:
                dhalo["suffix"] = dX.narrow(dim, me["prefix"] + n, me["suffix"])
        # the opposite way: what this rank received, it sends back as gradient, and the reverse
        ops, landing, keep = [], [], []
        for peer, tag, lo, hi, where, off in ex.recvs:
            g = dhalo[where].narrow(dim, off, hi - lo) if where in dhalo else x.new_zeros(
                [*x.shape[:dim], hi - lo, *x.shape[dim + 1:]])
            g = _packed(g, cl)
            keep.append(g)
            ops.append(_p2p(dist.isend, g, gr(peer), group, tag))
        for peer, tag, lo, hi, where, off in ex.sends:
            buf = _empty([*x.shape[:dim], hi - lo, *x.shape[dim + 1:]], cl, x)
            ops.append(_p2p(dist.irecv, buf, gr(peer), group, tag))
            landing.append((buf, lo - start))
        for wk in _post(ops):
            wk.wait()
        for buf, at in landing:
            dx.narrow(dim, at, buf.shape[dim]).add_(buf)
        dist.all_reduce(dw, group=group)
        if has_bias:
            dist.all_reduce(db, group=group)
        return dx, dw, db, None, None, None, None, None, None, None


def _axis_args(conv, w, axis):
    """The sharded axis' (kernel, stride, dilation, pad_before, pad_after) for the C rule."""
    stride, dilation, pb, pa, _ = conv
    return (w.shape[2 + axis], stride[axis], dilation[axis], pb[axis], pa[axis])


def halo_conv(x, w, b=None, *, dim, group=None, stride=1, padding=0, dilation=1, groups=1,
              padding_before=None, padding_after=None, sizes=None, rows="window",
              schedule=None, overlap=True, out=None):
    """This rank's output rows of the whole convolution of the input sharded along tensor dim
    `dim` (2 = the first spatial dim) over `group` (SPEC section 14): x is this rank's
    contiguous shard of input rows (rank order = row order; uneven shards allowed), w and b the
    whole conv's (the same on every rank). Paddings are the whole conv's: `padding` (symmetric,
    an int or one per spatial dim) or padding_before/padding_after (asymmetric, negative crops).
    sizes: every rank's shard size along dim, when known (else one all_gather of the shapes,
    which also checks them). out: a tensor to write this rank's rows into (a slice of a
    preallocated gathered output, say). rows: "window" (SPEC section 14's rows) or "aligned"
    (see the module's text). overlap=False runs the rows in one launch after the exchange. Differentiable in x, w and b: the backward sends the halo gradient back and
    all-reduces dw and db over the group.

    Returns this rank's rows, [N, C_out, ...] with the rows given by
    convnd.distributed.shard_rows along dim (possibly none)."""
    nd = x.dim() - 2
    stride = _tuple(stride, nd, "stride")
    dilation = _tuple(dilation, nd, "dilation")
    if padding_before is None:
        padding_before = padding_after = _tuple(padding, nd, "padding")
    pb = _tuple(padding_before, nd, "padding_before")
    pa = _tuple(padding_after, nd, "padding_after")
    if sizes is None:
        sizes = _gather_shapes(x, group, dim)
    else:
        world = dist.get_world_size(group)
        if len(sizes) != world or sizes[dist.get_rank(group)] != x.shape[dim]:
            raise ValueError(f"convnd.distributed: sizes={list(sizes)} must list the {world} "
                             f"ranks' shard sizes, this rank's being x.shape[{dim}]="
                             f"{x.shape[dim]}")
    if rows not in ("window", "aligned"):
        raise ValueError(f"convnd.distributed: rows={rows!r} must be 'window' or 'aligned'")
    conv = (stride, dilation, pb, pa, groups)
    ex = _Exchange(list(sizes), dist.get_rank(group), _axis_args(conv, w, dim - 2),
                   rows == "aligned")
    return _HaloConv.apply(x, w, b, dim, group, ex, conv, schedule, overlap, out)


def shard_rows(total, kernel, *, stride=1, dilation=1, padding_before=0, padding_after=0,
               begin, size, rows="window"):
    """The C rule for one shard along one axis (convnd_shard_rows, or convnd_shard_rows_aligned
    for rows="aligned"): the output rows [out_begin, out_end) it computes, the input rows
    [in_begin, in_end) they read, x's rows [x_begin, x_end), its prefix and suffix sizes, its own
    padding and its interior rows [interior_begin, interior_end)."""
    return _C.shard_rows(total, kernel, stride, dilation, padding_before, padding_after, begin,
                         size, rows == "aligned")


# ---- parallelize: a model's convs and group norms, sharded --------------------------------------


class _AllReduceGrad(torch.autograd.Function):
    """Identity forward; the gradient summed over the group (a parameter used on every rank's
    rows: its whole gradient is the sum of the ranks')."""

    @staticmethod
    def forward(ctx, t, group):
        ctx.group = group
        return t.view_as(t)

    @staticmethod
    def backward(ctx, g):
        g = g.clone()
        dist.all_reduce(g, group=ctx.group)
        return g, None


class ShardedConv(nn.Module):
    """A Conv1d/2d/3d (zeros padding) run by halo_conv on this rank's rows (rows="aligned"); it
    shares the original module's weight and bias."""

    def __init__(self, conv, group, dim, schedule=None):
        super().__init__()
        self.conv, self.group, self.dim, self.schedule = conv, group, dim, schedule
        from .nn import explicit_padding
        self.pb, self.pa = explicit_padding(conv)

    def forward(self, x):
        c = self.conv
        return halo_conv(x, c.weight, c.bias, dim=self.dim, group=self.group, stride=c.stride,
                         dilation=c.dilation, groups=c.groups, padding_before=self.pb,
                         padding_after=self.pa, rows="aligned", schedule=self.schedule)


class ShardedGroupNorm(nn.Module):
    """GroupNorm whose statistics are the whole tensor's: each group's sum and sum of squares
    over this rank's rows, all-reduced over the process group (differentiably), in float64."""

    def __init__(self, norm, group):
        super().__init__()
        self.norm, self.group = norm, group

    def forward(self, x):
        from torch.distributed.nn.functional import all_reduce
        g = self.norm
        N, C = x.shape[:2]
        xg = x.reshape(N, g.num_groups, -1).to(torch.float64)
        n = torch.tensor(float(xg.shape[-1]), dtype=torch.float64, device=x.device)
        stats = torch.stack([xg.sum(-1), (xg * xg).sum(-1), n.expand(N, g.num_groups)])
        stats = all_reduce(stats, group=self.group if self.group is not None else
                           dist.group.WORLD)
        mean = stats[0] / stats[2]
        var = stats[1] / stats[2] - mean * mean
        shape = [N, g.num_groups] + [1] * (xg.dim() - 2)
        y = ((xg - mean.view(shape)) / torch.sqrt(var.view(shape) + g.eps)).to(x.dtype)
        y = y.reshape(x.shape)
        if g.affine:
            view = [1, C] + [1] * (x.dim() - 2)
            y = y * _AllReduceGrad.apply(g.weight, self.group).view(view) + _AllReduceGrad.apply(
                g.bias, self.group).view(view)
        return y


class ShardedCausalConv(nn.Module):
    """A causal conv of the pattern video VAEs use (Wan's CausalConv3d: `_padding`, F.pad's list
    with the time padding all before, and forward(x, cache_x=None) putting the cached frames in
    front of x in place of that much padding), sharded along a spatial dim by halo_conv. The time
    axis and its cache stay on each rank, which keeps its own rows of the cache; the cached
    frames are concatenated as the original forward does (the halo is the spatial axis')."""

    def __init__(self, conv, group, dim, schedule=None):
        super().__init__()
        self.conv, self.group, self.dim, self.schedule = conv, group, dim, schedule
        self.pad = list(conv._padding)

    def forward(self, x, cache_x=None):
        c, pad = self.conv, list(self.pad)
        if cache_x is not None and pad[4] > 0:
            x = torch.cat([cache_x.to(x.device), x], dim=2)
            pad[4] -= cache_x.shape[2]
        nd = x.dim() - 2
        pb = [pad[2 * (nd - 1 - i)] for i in range(nd)]  # F.pad lists the last dim first
        pa = [pad[2 * (nd - 1 - i) + 1] for i in range(nd)]
        return halo_conv(x, c.weight, c.bias, dim=self.dim, group=self.group, stride=c.stride,
                         dilation=c.dilation, groups=c.groups, padding_before=pb,
                         padding_after=pa, rows="aligned", schedule=self.schedule)


def _is_causal_pattern(module):
    pad = getattr(module, "_padding", None)
    return (isinstance(module, nn.Conv3d) and isinstance(pad, (tuple, list)) and len(pad) == 6
            and pad[5] == 0 and all(p == 0 for p in module.padding))


def _why_not_sharded(module):
    if module.padding_mode != "zeros":
        return f"padding_mode={module.padding_mode!r} (zeros only)"
    if type(module).forward not in (nn.Conv1d.forward, nn.Conv2d.forward, nn.Conv3d.forward) \
            and not _is_causal_pattern(module):
        return f"{type(module).__name__} has its own forward"
    return None


def parallelize(model, group=None, dim=2, schedule=None, strict=False):
    """Replaces (in place) the model's Conv1d/Conv2d/Conv3d modules by ShardedConv, its causal
    convs of Wan's CausalConv3d pattern by ShardedCausalConv and its GroupNorm modules by
    ShardedGroupNorm, so the model runs on this rank's rows of an input
    sharded along tensor dim `dim` over `group`. The other layers must be row-local (elementwise
    activations, nearest upsampling by an integer factor, residual adds): they are left as they
    are. Returns the list of (name, reason) of convolutions left unsharded (an error instead when
    strict)."""
    skipped = []
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            full = f"{name}.{child_name}" if name else child_name
            if isinstance(child, nn.GroupNorm):
                setattr(module, child_name, ShardedGroupNorm(child, group))
            elif isinstance(child, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
                why = _why_not_sharded(child)
                if why is not None:
                    skipped.append((full, why))
                elif _is_causal_pattern(child):
                    setattr(module, child_name, ShardedCausalConv(child, group, dim, schedule))
                else:
                    setattr(module, child_name, ShardedConv(child, group, dim, schedule))
    if strict and skipped:
        raise ValueError("convnd.distributed.parallelize: cannot shard " +
                         "; ".join(f"{n}: {w}" for n, w in skipped))
    return skipped
