/* The configuration dispatch of a launcher, written once for every family: configuration index
 * -> the tile template arguments of one row of the family's table (an X-macro of rows
 * X(name, BM, BN, BK, ...): the registry's names come from the same table, so an index means
 * the same tile on both sides). A family supplies only what one tile runs, its template taking
 * the row's numbers in order (most tables: BM, BN, BK, A, B, C):
 *
 *   struct F {
 *       static constexpr const char *name = "schedule";
 *       template <typename T, int BM, int BN, int BK, int A, int B, int C>
 *       static convnd_status tile(const convnd_launch_args *a, const char *spec);
 *   };
 *   CONVND_DEFINE_CONFIG_DISPATCH(its_dispatch, ITS_CONFIGS)   // then its_dispatch<F, T>(a)
 *
 * spec is "schedule:name", for messages. The tensor-core tables compiled one unit per
 * configuration have their own (families/igemm/config_shard.cuh). */
#ifndef CONVND_CONFIG_DISPATCH_CUH
#define CONVND_CONFIG_DISPATCH_CUH

#include <string>

#define CONVND_CONFIG_ROW(cname, ...)                                                              \
    if (a->config == index++) {                                                                    \
        static const std::string spec = std::string(F::name) + ":" #cname;                         \
        return F::template tile<T, __VA_ARGS__>(a, spec.c_str());                                  \
    }

#define CONVND_DEFINE_CONFIG_DISPATCH(fn, TABLE)                                                   \
    template <class F, typename T> __host__ convnd_status fn(const convnd_launch_args *a) {        \
        int32_t index = 0;                                                                         \
        TABLE(CONVND_CONFIG_ROW)                                                                   \
        return convnd_error(CONVND_ERR_INTERNAL, "%s: config %d out of range [0, %d)", F::name,    \
                            (int)a->config, (int)index);                                           \
    }

#endif
