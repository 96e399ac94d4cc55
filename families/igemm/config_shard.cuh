/* Configuration shards of the tensor-core launchers (igemm_tc, convT_tc). Each dispatches over
 * CONVND_IGEMM_TC_CONFIGS to one function template per configuration. Built as one translation
 * unit (the emulated device, tools/static_check.py), a .cu instantiates every configuration; in
 * the GPU build families/CMakeLists.txt compiles it once per configuration, CONVND_SHARD = its
 * index, plus once with CONVND_SHARD = -1 for the extern "C" launcher alone, so that nvcc compiles
 * a dtype's configurations in parallel (one igemm_tc .cu took nearly 6 minutes on one core). */
#ifndef CONVND_CONFIG_SHARD_CUH
#define CONVND_CONFIG_SHARD_CUH

#include "igemm_configs.h"

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

} // namespace CONVND_NS

/* What a sharded .cu ends with: the extern "C" launcher NAME (CONVND_NS::LAUNCH<T>), and the
 * configurations' functions CONVND_NS::CONFIG<T, index> where this unit builds them. */
#if !defined(CONVND_SHARD)
#define CONVND_TC_UNIT(NAME, T, CONFIG, LAUNCH)                                                    \
    CONVND_DEFINE_LAUNCHER(NAME) {                                                                 \
        return CONVND_NS::LAUNCH<T>(a);                                                            \
    }
#elif CONVND_SHARD < 0
#define CONVND_TC_UNIT(NAME, T, CONFIG, LAUNCH)                                                    \
    static_assert(CONVND_SHARDS == CONVND_NS::tc_config_count,                                     \
                  "families/CMakeLists.txt builds one shard per tensor-core configuration");        \
    CONVND_DEFINE_LAUNCHER(NAME) {                                                                 \
        return CONVND_NS::LAUNCH<T>(a);                                                            \
    }
#else
#define CONVND_TC_UNIT(NAME, T, CONFIG, LAUNCH)                                                    \
    static_assert(CONVND_SHARD < CONVND_NS::tc_config_count, "a shard past the configurations");   \
    static_assert(CONVND_NS::tc_config_built(CONVND_SHARD),                                        \
                  "a shard of a configuration not built");                                         \
    template convnd_status CONVND_NS::CONFIG<T, CONVND_SHARD>(const convnd_launch_args *);
#endif

#endif
