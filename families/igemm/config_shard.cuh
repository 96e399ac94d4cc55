/* Configuration shards of the tensor-core launchers (igemm_tc, convT_tc). Each dispatches over
 * CONVND_IGEMM_TC_CONFIGS to one function template per configuration. Built as one translation
 * unit (the emulated device, tools/static_check.py), a .cu instantiates every configuration; in
 * the GPU build families/CMakeLists.txt compiles it once per configuration, CONVND_SHARD = its
 * index, plus once with CONVND_SHARD = -1 for the extern "C" launcher alone, so that nvcc compiles
 * a dtype's configurations in parallel (one igemm_tc .cu took nearly 6 minutes on one core). */
#ifndef CONVND_CONFIG_SHARD_CUH
#define CONVND_CONFIG_SHARD_CUH

#include <string>

#include "igemm_configs.h"
#include "launch_abi.h"

/* Whether this unit defines the per-configuration functions (and so builds their kernels). */
#if !defined(CONVND_SHARD) || CONVND_SHARD >= 0
#define CONVND_SHARD_BUILDS_CONFIGS 1
#else
#define CONVND_SHARD_BUILDS_CONFIGS 0
#endif

namespace CONVND_NS {

constexpr bool tc_config_names_equal(const char *a, const char *b) {
    while (*a && *a == *b)
        ++a, ++b;
    return *a == *b;
}

#define CONVND_TC_CONFIG_NAME(cname, ...) #cname,
constexpr const char *tc_config_names[] = {CONVND_IGEMM_TC_CONFIGS(CONVND_TC_CONFIG_NAME)};
#undef CONVND_TC_CONFIG_NAME
constexpr int tc_config_count = (int)(sizeof tc_config_names / sizeof tc_config_names[0]);

/* The index of a configuration name in CONVND_IGEMM_TC_CONFIGS: a template argument and a case
 * label, as the registry's config index is at run time. */
constexpr int tc_config_index(const char *name) {
    for (int i = 0; i < tc_config_count; ++i)
        if (tc_config_names_equal(tc_config_names[i], name)) return i;
    return -1;
}

/* Whether configuration i is built: the CMake option CONVND_SKIP_TC_CONFIGS leaves some out (the
 * ASan build), as the bit mask CONVND_TC_SKIPPED; a unit compiled on its own builds them all. */
#ifndef CONVND_TC_SKIPPED
#define CONVND_TC_SKIPPED 0u
#endif
constexpr bool tc_config_built(int i) {
    return i >= 0 && i < tc_config_count && ((CONVND_TC_SKIPPED >> i) & 1u) == 0;
}

/* What a launcher answers for a configuration this build left out. */
inline convnd_status tc_config_not_built(const char *spec) {
    return convnd_error(CONVND_ERR_UNSUPPORTED,
                        "%s is not built in this build (CMake CONVND_SKIP_TC_CONFIGS)", spec);
}

/* "schedule:configuration" of configuration CFG of family F, for messages. */
template <class F, int CFG> const char *tc_spec() {
    static const std::string spec = std::string(F::name) + ":" + tc_config_names[CFG];
    return spec.c_str();
}

/* The dispatch of a tensor-core family over CONVND_IGEMM_TC_CONFIGS, written once (as
 * config_dispatch.cuh's for the other tables). F supplies what one tile runs:
 *   static constexpr const char *name;
 *   template <typename T, int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES>
 *   static convnd_status tile(const convnd_launch_args *a, const char *spec);
 * Configuration CFG's function is defined (its kernels built) only in the units that build
 * configurations; the launcher's unit declares it. */
template <class F, typename T, int CFG>
__host__ convnd_status tc_config(const convnd_launch_args *a)
#if CONVND_SHARD_BUILDS_CONFIGS
{
#define CONVND_TC_CONFIG_TILE(cname, BM, BN, BK, WARPS_M, WARPS_N, STAGES)                         \
    if constexpr (CFG == tc_config_index(#cname))                                                  \
        return F::template tile<T, BM, BN, BK, WARPS_M, WARPS_N, STAGES>(a, tc_spec<F, CFG>());
    CONVND_IGEMM_TC_CONFIGS(CONVND_TC_CONFIG_TILE)
#undef CONVND_TC_CONFIG_TILE
    return convnd_error(CONVND_ERR_INTERNAL, "%s: no configuration %d", F::name, CFG);
}
#else
    ;
#endif

template <class F, typename T> __host__ convnd_status tc_launch(const convnd_launch_args *a) {
    switch (a->config) {
#define CONVND_TC_CASE(cname, ...)                                                                 \
    case tc_config_index(#cname):                                                                  \
        if constexpr (tc_config_built(tc_config_index(#cname)))                                    \
            return tc_config<F, T, tc_config_index(#cname)>(a);                                    \
        else /* supports() refuses it first */                                                     \
            return tc_config_not_built(tc_spec<F, tc_config_index(#cname)>());
        CONVND_IGEMM_TC_CONFIGS(CONVND_TC_CASE)
#undef CONVND_TC_CASE
    default:
        return convnd_error(CONVND_ERR_INTERNAL, "%s: config %d out of range [0, %d)", F::name,
                            (int)a->config, tc_config_count);
    }
}

} // namespace CONVND_NS

/* What a sharded .cu ends with: the extern "C" launcher NAME (tc_launch<F, T>), and
 * configuration CONVND_SHARD's tc_config<F, T, index> where this unit builds it. */
#if !defined(CONVND_SHARD)
#define CONVND_TC_UNIT(NAME, T, F)                                                                 \
    CONVND_DEFINE_LAUNCHER(NAME) {                                                                 \
        return CONVND_NS::tc_launch<CONVND_NS::F, T>(a);                                           \
    }
#elif CONVND_SHARD < 0
#define CONVND_TC_UNIT(NAME, T, F)                                                                 \
    static_assert(CONVND_SHARDS == CONVND_NS::tc_config_count,                                     \
                  "families/CMakeLists.txt builds one shard per tensor-core configuration");       \
    CONVND_DEFINE_LAUNCHER(NAME) {                                                                 \
        return CONVND_NS::tc_launch<CONVND_NS::F, T>(a);                                           \
    }
#else
#define CONVND_TC_UNIT(NAME, T, F)                                                                 \
    static_assert(CONVND_SHARD < CONVND_NS::tc_config_count, "a shard past the configurations");   \
    static_assert(CONVND_NS::tc_config_built(CONVND_SHARD),                                        \
                  "a shard of a configuration not built");                                         \
    template convnd_status CONVND_NS::tc_config<CONVND_NS::F, T, CONVND_SHARD>(                    \
        const convnd_launch_args *);
#endif

#endif
