// The hostile cases of siwx-wire-peer: what each sends, the reply RFC
// 5040 section 7 / RFC 7306 section 8 call for, and what the server must
// find in its memory and receive queue afterwards.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fpdu.h"
#include "reply.h"

namespace wirepeer {

// The server's target, from the private data of its MPA Reply.
struct Target {
    uint64_t addr = 0;
    uint32_t len = 0;
    uint32_t rkey = 0;     // REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC
    uint32_t ro_rkey = 0;  // the same memory, REMOTE_READ only
};

struct Plan {
    std::vector<Bytes> fpdus;  // sent in order, each a whole FPDU
    std::string sent;          // what they are, for the transcript
    Expect expect;
    // For the server (they do not depend on the target's address):
    uint32_t recvs = 2;   // receives it posts before accepting
    bool change = false;  // one target word changes...
    uint32_t word = 0;    // ...this one...
    uint64_t value = 0;   // ...to this; everything else stays
};

struct Case {
    const char* name;
    const char* summary;
    std::function<Plan(const Target&, bool crc_on)> build;
};

const std::vector<Case>& Cases();
const Case* FindCase(const std::string& name);

}  // namespace wirepeer
