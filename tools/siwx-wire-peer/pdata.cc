// Private data of the hostile peers (see pdata.h).
#include "pdata.h"

#include "hostile_proto.h"

extern "C" {
#include <siwx/proto/bytes.h>
}

namespace wirepeer {

Bytes Words(const std::vector<uint64_t>& w) {
    Bytes b(w.size() * 8);
    for (size_t i = 0; i < w.size(); i++) siwx_put_be64(b.data() + 8 * i, w[i]);
    return b;
}

bool ParseTarget(const Bytes& pd, Target* t) {
    if (pd.size() < SIWX_HP_ACC_WORDS * 8 || siwx_get_be64(pd.data()) != SIWX_HP_ACC_MAGIC)
        return false;
    t->addr = siwx_get_be64(pd.data() + 8);
    t->len = uint32_t(siwx_get_be64(pd.data() + 16));
    t->rkey = uint32_t(siwx_get_be64(pd.data() + 24));
    t->ro_rkey = uint32_t(siwx_get_be64(pd.data() + 32));
    return true;
}

}  // namespace wirepeer
