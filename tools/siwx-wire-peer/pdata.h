// The private data siwx-wire-peer and siwx-wire-fuzz exchange with
// siwx-hostile-target (hostile_proto.h): big-endian 64-bit words.
#pragma once

#include <cstdint>
#include <vector>

#include "cases.h"
#include "fpdu.h"

namespace wirepeer {

Bytes Words(const std::vector<uint64_t>& w);
// The target of the server's MPA Reply; false when it is not the server's.
bool ParseTarget(const Bytes& pd, Target* t);

}  // namespace wirepeer
