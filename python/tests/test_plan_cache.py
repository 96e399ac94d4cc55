"""The ops run convnd plans from a cache: a repeated call with the same problem, device and
schedule validates nothing and plans nothing (the library's own counters say so), gives the
same result as the first, and still refuses operands that do not match the plan."""
import threading

import pytest
import torch
import torch.nn.functional as F

import convnd
from conftest import SEED

OP = torch.ops.convnd.conv_nd.default
WGRAD = torch.ops.convnd.conv_nd_wgrad.default


@pytest.fixture(autouse=True)
def fresh_cache():
    convnd.clear_plan_cache()
    convnd.set_plan_cache_capacity(1024)
    yield
    convnd.clear_plan_cache()
    convnd.set_plan_cache_capacity(1024)


def counts():
    c = convnd.counters()
    return c["validations"], c["plans"]


def conv_call(x, w, b=None, z=None, beta=0.0, activation=0):
    return OP(x, w, b, z, [2, 1], [1, 2], [1, 0], [0, 2], 1, 0, 1.0, beta, activation, None)


def reference(x, w, b=None, z=None, beta=0.0):
    xp = F.pad(x.double(), (0, 2, 1, 0))  # padding_before [1, 0], padding_after [0, 2] on (H, W)
    y = F.conv2d(xp, w.double(), None if b is None else b.double(), stride=(2, 1),
                 dilation=(1, 2))
    return y if z is None else y + beta * z.double()


def close(y, ref):
    # f32 with exact FMA accumulation over C_in*K = 3*3*2 = 18 terms: a few ulps of |y|
    return torch.allclose(y.double(), ref, rtol=1e-5, atol=1e-5 * ref.abs().max().item())


def test_repeated_call_validates_and_plans_nothing():
    g = torch.Generator().manual_seed(SEED)
    x = torch.randn(2, 3, 9, 8, generator=g)
    w = torch.randn(4, 3, 3, 2, generator=g)
    b = torch.randn(4, generator=g)
    before = counts()
    y0, ref0 = conv_call(x, w, b), reference(x, w, b)
    first = counts()
    # the miss makes the plan, which validates once; the shapes are the plan's own
    # (convnd_plan_tensor_describe), so nothing validates a second time
    assert first == (before[0] + 1, before[1] + 1), (before, first)
    for _ in range(3):  # fresh tensors of the same shapes: the same problem
        x = torch.randn(2, 3, 9, 8, generator=g)
        w = torch.randn(4, 3, 3, 2, generator=g)
        b = torch.randn(4, generator=g)
        y = conv_call(x, w, b)
        assert close(y, reference(x, w, b))
    assert counts() == first, (first, counts())
    assert convnd.plan_cache_info()["hits"] == 3
    assert convnd.plan_cache_info()["misses"] == 1
    assert close(y0, ref0)


def test_another_problem_is_a_miss_then_a_hit():
    x = torch.randn(1, 3, 9, 8)
    w = torch.randn(4, 3, 3, 2)
    conv_call(x, w)
    conv_call(x, w, torch.randn(4))  # with a bias: another problem
    conv_call(x.to(memory_format=torch.channels_last), w)  # another layout
    assert convnd.plan_cache_info()["entries"] == 3
    before = counts()
    x2 = torch.randn(1, 3, 9, 8).to(memory_format=torch.channels_last)
    y = conv_call(x2, w)
    assert counts() == before
    assert y.is_contiguous(memory_format=torch.channels_last)
    assert close(y, reference(x2, w))


def test_a_cached_problem_still_refuses_operands_it_was_not_made_for():
    x = torch.randn(1, 3, 9, 8)
    w = torch.randn(4, 3, 3, 2)
    b = torch.randn(4)
    conv_call(x, w, b)
    with pytest.raises(ValueError, match=r"bias has shape \[5\] but the problem .* expects \[4\]"):
        conv_call(x, w, torch.randn(5))
    with pytest.raises(ValueError, match=r"bias has dtype"):
        conv_call(x, w, b.double())
    z = torch.randn(conv_call(x, w, b, None).shape)
    conv_call(x, w, b, z, beta=0.5)
    with pytest.raises(ValueError, match=r"z has shape"):
        conv_call(x, w, b, z[:, :, :-1], beta=0.5)
    # groups=1 with a w of C_in/g = 1: the key (x, C_out, kernel) is the same, w's shape is not
    with pytest.raises(ValueError, match=r"w has shape \[4, 1, 3, 2\] but the problem"):
        conv_call(x, torch.randn(4, 1, 3, 2), b)


def test_residual_and_activation_from_the_cache():
    x = torch.randn(2, 3, 9, 8)
    w = torch.randn(4, 3, 3, 2)
    b = torch.randn(4)
    z = torch.randn(2, 4, 4, 8)
    y1 = conv_call(x, w, b, z, beta=0.5, activation=1)
    before = counts()
    y2 = conv_call(x, w, b, z, beta=0.5, activation=1)
    assert counts() == before
    assert torch.equal(y1, y2)
    assert close(y2, reference(x, w, b, z, 0.5).clamp_min(0))


def test_weight_gradient_repeated_call_validates_and_plans_nothing():
    x = torch.randn(2, 3, 9, 8)
    dy = torch.randn(2, 4, 4, 8)
    args = ([4, 3, 3, 2], None, [2, 1], [1, 2], [1, 0], [0, 2], 1, 0, 1.0, 0.0, None)
    WGRAD(x, dy, *args)
    before = counts()
    x = torch.randn(2, 3, 9, 8)
    dy = torch.randn(2, 4, 4, 8)
    dw = WGRAD(x, dy, *args)
    assert counts() == before
    xd = x.double().requires_grad_()
    wd = torch.zeros(4, 3, 3, 2, dtype=torch.float64, requires_grad=True)
    y = F.conv2d(F.pad(xd, (0, 2, 1, 0)), wd, stride=(2, 1), dilation=(1, 2))
    (ref,) = torch.autograd.grad(y, wd, dy.double())
    assert torch.allclose(dw.double(), ref, rtol=1e-5, atol=1e-5 * ref.abs().max().item())
    # a dy of another shape is refused with the message of an uncached call
    with pytest.raises(ValueError, match=r"dy has shape"):
        WGRAD(x, torch.randn(2, 4, 4, 7), *args)


def test_transposed_weight_gradient_from_the_cache():
    # transposed source: x and dy trade places in the bound problem (the cached swap)
    x = torch.randn(1, 4, 3, 4)
    dy = OP(x, torch.randn(4, 3, 3, 2), None, None, [2, 1], [1, 2], [1, 0], [0, 1], 1, 1, 1.0,
            0.0, 0, None)
    dy = torch.randn(dy.shape)
    args = ([4, 3, 3, 2], None, [2, 1], [1, 2], [1, 0], [0, 1], 1, 1, 1.0, 0.0, None)
    dw1 = WGRAD(x, dy, *args)
    before = counts()
    dw2 = WGRAD(x, dy, *args)
    assert counts() == before
    assert torch.equal(dw1, dw2)


def test_eviction_keeps_the_most_recent():
    convnd.set_plan_cache_capacity(2)
    w = torch.randn(4, 3, 3, 2)
    xs = [torch.randn(1, 3, 9, 8 + i) for i in range(3)]
    for x in xs:
        conv_call(x, w)
    assert convnd.plan_cache_info()["entries"] == 2
    before = counts()
    conv_call(xs[2], w)  # still cached
    assert counts() == before
    y = conv_call(xs[0], w)  # evicted: planned again, still right
    assert counts()[1] == before[1] + 1
    assert close(y, reference(xs[0], w))


def test_capacity_zero_caches_nothing():
    convnd.set_plan_cache_capacity(0)
    x = torch.randn(1, 3, 9, 8)
    w = torch.randn(4, 3, 3, 2)
    conv_call(x, w)
    before = counts()
    conv_call(x, w)
    assert counts()[1] == before[1] + 1
    assert convnd.plan_cache_info()["entries"] == 0
    with pytest.raises(ValueError, match="capacity=-1"):
        convnd.set_plan_cache_capacity(-1)


def test_many_threads_share_the_cache():
    w = torch.randn(4, 3, 3, 2)
    xs = [torch.randn(1, 3, 9, 8 + i % 3) for i in range(12)]
    refs = [reference(x, w) for x in xs]
    results = [None] * len(xs)
    convnd.set_plan_cache_capacity(2)  # evictions while other threads run their plans

    def work(i):
        for _ in range(3):
            results[i] = conv_call(xs[i], w)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for y, ref in zip(results, refs):
        assert close(y, ref)
