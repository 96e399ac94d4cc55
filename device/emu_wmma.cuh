/* Emulated WMMA for the emulated device: the subset of nvcuda::wmma the kernels use, under
 * namespace convnd_wmma (on the GPU convnd_wmma is nvcuda::wmma itself).
 *
 * A fragment is spread over the warp's 32 lanes like on a GPU: lane l holds elements
 * [l*num_elements, (l+1)*num_elements) of the tile in row-major order (the GPU's order differs,
 * which is fine: kernels may only apply the same operation to every x[i]). load_matrix_sync,
 * mma_sync and store_matrix_sync are warp-collective: the last lane to arrive does the whole
 * warp's work while the others wait, so a call from part of a warp is reported, and so is a
 * pointer, ldm or alignment the GPU would reject. mma_sync accumulates in f32 with fmaf in
 * increasing k; precision::tf32 inputs are rounded to TF32 first. */
#ifndef CONVND_EMU_WMMA_CUH
#define CONVND_EMU_WMMA_CUH

/* Round to TF32 (10 mantissa bits), to nearest with ties away from zero, like
 * cvt.rna.tf32.f32; the result is a float whose low 13 bits are zero. */
inline float convnd_float_to_tf32(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7F800000u) != 0x7F800000u) u = (u + 0x1000u) & ~0x1FFFu; /* finite only */
    memcpy(&x, &u, sizeof u);
    return x;
}

namespace convnd_wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
namespace precision {
struct tf32 {};
} // namespace precision
enum layout_t { mem_row_major, mem_col_major };

using ::convnd_float_to_tf32;

namespace detail {

template <class Use, int M, int N, int K> struct tile;
template <int M, int N, int K> struct tile<matrix_a, M, N, K> {
    static constexpr int rows = M, cols = K;
};
template <int M, int N, int K> struct tile<matrix_b, M, N, K> {
    static constexpr int rows = K, cols = N;
};
template <int M, int N, int K> struct tile<accumulator, M, N, K> {
    static constexpr int rows = M, cols = N;
};

template <class T> struct storage { using type = T; };
template <> struct storage<precision::tf32> { using type = float; };

/* The shapes CUDA offers for each input type (accumulators follow their inputs). */
template <class Use, class T, int M, int N, int K> constexpr bool valid_shape() {
    if (std::is_same<Use, accumulator>::value)
        return std::is_same<T, float>::value &&
               ((M == 16 && N == 16 && (K == 16 || K == 8)) || (M == 32 && N == 8 && K == 16) ||
                (M == 8 && N == 32 && K == 16));
    if (std::is_same<T, precision::tf32>::value) return M == 16 && N == 16 && K == 8;
    if (std::is_same<T, convnd_half>::value || std::is_same<T, convnd_bf16>::value)
        return (M == 16 && N == 16 && K == 16) || (M == 32 && N == 8 && K == 16) ||
               (M == 8 && N == 32 && K == 16);
    return false;
}

} // namespace detail

template <class Use, int M, int N, int K, class T, class Layout = void> struct fragment {
    static_assert(detail::valid_shape<Use, T, M, N, K>(),
                  "convnd_wmma::fragment: shape/type combination that WMMA does not offer");
    static_assert(std::is_same<Use, accumulator>::value != !std::is_same<Layout, void>::value,
                  "matrix_a/matrix_b fragments need row_major or col_major; accumulators none");
    using element_type = typename detail::storage<T>::type;
    using input_type = T;
    using use = Use;
    using layout = Layout;
    static constexpr int rows = detail::tile<Use, M, N, K>::rows;
    static constexpr int cols = detail::tile<Use, M, N, K>::cols;
    static constexpr int num_elements = rows * cols / CONVND_EMU_WARP;
    element_type x[num_elements];
};

template <class Use, int M, int N, int K, class T, class Layout>
inline void fill_fragment(fragment<Use, M, N, K, T, Layout> &f,
                          const typename fragment<Use, M, N, K, T, Layout>::element_type &v) {
    for (int i = 0; i < f.num_elements; ++i)
        f.x[i] = v;
}

namespace detail {

inline void require_full_warp(uint32_t lanes, const char *name) {
    if (lanes != 0xFFFFFFFFu)
        convnd_emu_fail("%s needs all 32 lanes of a warp; this warp has lanes 0x%08x", name, lanes);
}

/* The GPU requires 256-bit aligned pointers and ldm a multiple of 16 bytes. */
template <class E> inline void check_matrix_pointer(const char *name, const void *p, unsigned ldm) {
    if ((uintptr_t)p % 32 != 0) convnd_emu_fail("%s: pointer %p is not 32-byte aligned", name, p);
    if ((ldm * sizeof(E)) % 16 != 0)
        convnd_emu_fail("%s: ldm %u is not a multiple of %zu elements", name, ldm, 16 / sizeof(E));
}

struct memory_arg {
    void *frag;
    const void *ptr;
    unsigned ldm;
    int col_major;
};

template <class F> inline void check_uniform(void *const *args, const char *name) {
    const memory_arg *a0 = static_cast<const memory_arg *>(args[0]);
    for (uint32_t l = 1; l < CONVND_EMU_WARP; ++l) {
        const memory_arg *a = static_cast<const memory_arg *>(args[l]);
        if (a->ptr != a0->ptr || a->ldm != a0->ldm || a->col_major != a0->col_major)
            convnd_emu_fail("%s: lane %u passed (%p, ldm %u, layout %d) but lane 0 (%p, ldm %u, "
                            "layout %d); they must be the same for the whole warp",
                            name, l, a->ptr, a->ldm, a->col_major, a0->ptr, a0->ldm, a0->col_major);
    }
    check_matrix_pointer<typename F::element_type>(name, a0->ptr, a0->ldm);
}

template <class F> void load_all(void *const *args, uint32_t lanes) {
    static const char name[] = "convnd_wmma::load_matrix_sync";
    require_full_warp(lanes, name);
    check_uniform<F>(args, name);
    const memory_arg *a0 = static_cast<const memory_arg *>(args[0]);
    const auto *p = static_cast<const typename F::element_type *>(a0->ptr);
    const size_t ldm = a0->ldm;
    for (uint32_t l = 0; l < CONVND_EMU_WARP; ++l) {
        F *f = static_cast<F *>(static_cast<const memory_arg *>(args[l])->frag);
        for (int e = 0; e < F::num_elements; ++e) {
            const size_t i = l * F::num_elements + e, r = i / F::cols, c = i % F::cols;
            f->x[e] = a0->col_major ? p[c * ldm + r] : p[r * ldm + c];
        }
    }
}

template <class F> void store_all(void *const *args, uint32_t lanes) {
    static const char name[] = "convnd_wmma::store_matrix_sync";
    require_full_warp(lanes, name);
    check_uniform<F>(args, name);
    const memory_arg *a0 = static_cast<const memory_arg *>(args[0]);
    auto *p = static_cast<typename F::element_type *>(const_cast<void *>(a0->ptr));
    const size_t ldm = a0->ldm;
    for (uint32_t l = 0; l < CONVND_EMU_WARP; ++l) {
        const F *f = static_cast<const F *>(static_cast<const memory_arg *>(args[l])->frag);
        for (int e = 0; e < F::num_elements; ++e) {
            const size_t i = l * F::num_elements + e, r = i / F::cols, c = i % F::cols;
            (a0->col_major ? p[c * ldm + r] : p[r * ldm + c]) = f->x[e];
        }
    }
}

/* An mma input element as the tensor core sees it. */
template <class T, class E> inline float mma_input(E v) {
    if constexpr (std::is_same<T, precision::tf32>::value)
        return convnd_float_to_tf32(v);
    else
        return convnd_to_f32(v);
}

struct mma_arg {
    void *d;
    const void *a, *b, *c;
};

/* Gathers the warp's fragments of one operand into a row-major tile. */
template <class F> inline void gather(void *const *args, const void *mma_arg::*which, float *tile) {
    for (uint32_t l = 0; l < CONVND_EMU_WARP; ++l) {
        const F *f = static_cast<const F *>(static_cast<const mma_arg *>(args[l])->*which);
        for (int e = 0; e < F::num_elements; ++e)
            tile[l * F::num_elements + e] = mma_input<typename F::input_type>(f->x[e]);
    }
}

template <class FD, class FA, class FB, class FC> void mma_all(void *const *args, uint32_t lanes) {
    require_full_warp(lanes, "convnd_wmma::mma_sync");
    constexpr int M = FA::rows, K = FA::cols, N = FB::cols;
    float a[M * K], b[K * N], c[M * N], d[M * N];
    gather<FA>(args, &mma_arg::a, a);
    gather<FB>(args, &mma_arg::b, b);
    gather<FC>(args, &mma_arg::c, c);
    convnd_emu_mma_f32(M, N, K, a, b, c, d);
    for (uint32_t l = 0; l < CONVND_EMU_WARP; ++l) {
        FD *f = static_cast<FD *>(static_cast<const mma_arg *>(args[l])->d);
        for (int e = 0; e < FD::num_elements; ++e)
            f->x[e] = d[l * FD::num_elements + e];
    }
}

} // namespace detail

template <class Use, int M, int N, int K, class T, class Layout>
inline void load_matrix_sync(fragment<Use, M, N, K, T, Layout> &f,
                             const typename fragment<Use, M, N, K, T, Layout>::element_type *p,
                             unsigned ldm) {
    static_assert(!std::is_same<Use, accumulator>::value,
                  "load_matrix_sync of an accumulator takes a layout_t");
    using F = fragment<Use, M, N, K, T, Layout>;
    detail::memory_arg arg = {&f, p, ldm, std::is_same<Layout, col_major>::value ? 1 : 0};
    convnd_emu_warp_collective("convnd_wmma::load_matrix_sync", 0xFFFFFFFFu, &arg,
                               detail::load_all<F>);
}

template <int M, int N, int K>
inline void load_matrix_sync(fragment<accumulator, M, N, K, float> &f, const float *p, unsigned ldm,
                             layout_t layout) {
    using F = fragment<accumulator, M, N, K, float>;
    detail::memory_arg arg = {&f, p, ldm, layout == mem_col_major ? 1 : 0};
    convnd_emu_warp_collective("convnd_wmma::load_matrix_sync", 0xFFFFFFFFu, &arg,
                               detail::load_all<F>);
}

template <int M, int N, int K>
inline void store_matrix_sync(float *p, const fragment<accumulator, M, N, K, float> &f,
                              unsigned ldm, layout_t layout) {
    using F = fragment<accumulator, M, N, K, float>;
    detail::memory_arg arg = {const_cast<F *>(&f), p, ldm, layout == mem_col_major ? 1 : 0};
    convnd_emu_warp_collective("convnd_wmma::store_matrix_sync", 0xFFFFFFFFu, &arg,
                               detail::store_all<F>);
}

template <int M, int N, int K, class T, class LA, class LB>
inline void mma_sync(fragment<accumulator, M, N, K, float> &d,
                     const fragment<matrix_a, M, N, K, T, LA> &a,
                     const fragment<matrix_b, M, N, K, T, LB> &b,
                     const fragment<accumulator, M, N, K, float> &c) {
    using FD = fragment<accumulator, M, N, K, float>;
    detail::mma_arg arg = {&d, &a, &b, &c};
    convnd_emu_warp_collective("convnd_wmma::mma_sync", 0xFFFFFFFFu, &arg,
                               detail::mma_all<FD, fragment<matrix_a, M, N, K, T, LA>,
                                               fragment<matrix_b, M, N, K, T, LB>, FD>);
}

} // namespace convnd_wmma

#endif
