// The frames of siwx-wire-fuzz: per connection, a stream built from
// templates of every RDMAP opcode (RFC 5040 section 4, RFC 7306 sections
// 4-6) with fields drawn from interesting ranges, a few raw mutations,
// and an ending frame that must draw a Terminate. Everything comes from
// a seeded generator of our own, so a seed and a target give the same
// frames every time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cases.h"
#include "fpdu.h"
#include "reply.h"

namespace wirepeer {

// splitmix64: small, fast and the same on every host.
class Rng {
  public:
    explicit Rng(uint64_t seed) : s_(seed) {}
    uint64_t Next();
    // Uniform in [0, n) (n > 0).
    uint64_t Below(uint64_t n) { return Next() % n; }
    // True with probability 1/n.
    bool OneIn(uint64_t n) { return Below(n) == 0; }

  private:
    uint64_t s_;
};

// The seed of connection @conn of a run with @seed.
uint64_t ConnSeed(uint64_t seed, uint64_t conn);

// What siwx must do with a frame in a stream of valid ones.
enum class Risk {
    kValid,  // processed, no Terminate (the stream so far was valid)
    kMaybe,  // processed or refused with a Terminate: either is right
    kEnd,    // must draw a Terminate (its cause known when exact)
};

// A Read or Atomic Request the frame issues: it takes one ORD credit
// (RFC 6581, RFC 7306 section 4.1) until its response comes.
struct Request {
    enum class Kind { kNone, kRead, kAtomic };
    Kind kind = Kind::kNone;
    uint32_t sink_stag = 0;
    uint64_t sink_to = 0;
    uint32_t size = 0;
    uint32_t req_id = 0;
};

struct FuzzFrame {
    Bytes fpdu;
    uint8_t opcode = 0;
    const char* what = "";  // the template, for the summary
    Risk risk = Risk::kValid;
    bool exact = false;  // kEnd: @expect is the one right Terminate
    Expect expect;
    bool on_qn1 = false;     // a request on QN 1: sent only with a free credit
    Request req;             // kValid requests only
    bool desync = false;     // the MPA length no longer frames the stream
    bool peer_term = false;  // our own Terminate: siwx closes, sends none
};

struct FuzzLimits {
    uint32_t frames = 4000;         // mean frames of a connection before its end
    uint32_t recvs = 32;            // receives the server posted (QN 0 messages)
    uint32_t recv_len = 128;        // octets each
    uint32_t mutate_one_in = 2000;  // raw mutations in the body
    // Reads from the target's first half, Writes and atomics to its
    // second: no Read Response races a Write to its source.
    bool apart = false;
};

// Every valid-shaped template: one per RDMAP opcode (0x0-0xb).
extern const uint8_t kFuzzOpcodes[SIWX_OP_COUNT];

// The state of one connection's stream as the generator builds it.
class FrameGen {
  public:
    FrameGen(uint64_t conn_seed, const Target& t, bool crc_on, const FuzzLimits& lim);
    // The whole connection: body frames (at most @max_body), then the
    // ending ones.
    std::vector<FuzzFrame> Connection(uint64_t max_body = UINT64_MAX);

    // One valid-shaped frame of @opcode with fresh fields (tests use it:
    // for Terminate, Read Response and Atomic Response the shape is
    // valid, not the frame's place in the stream).
    FuzzFrame Template(uint8_t opcode);
    // A raw mutation of @f (bit flips, octets, truncation, MPA length or
    // CRC); the CRC is recomputed most of the time.
    void Mutate(FuzzFrame& f);

  private:
    FuzzFrame Body();
    FuzzFrame Ending();
    FuzzFrame AnyEnding();
    FuzzFrame Write(uint32_t stag, uint64_t to, uint32_t len);
    FuzzFrame ReadReq(uint32_t stag, uint64_t to, uint32_t size);
    FuzzFrame Atomic(uint32_t stag, uint64_t to, bool cmp_swap);
    FuzzFrame Untagged(uint8_t opcode, uint32_t qn, uint32_t msn, Bytes body);
    uint32_t DrawLen(uint32_t max);
    uint64_t DrawTo(uint32_t len, bool read = false);
    uint32_t InvalidStag();
    FuzzFrame Exact(FuzzFrame f, siwx_term cause, bool with_rdma);

    Rng rng_;
    Target t_;
    bool crc_;
    FuzzLimits lim_;
    uint32_t msn_[SIWX_QN_COUNT];  // next MSN of each queue we send on
    uint32_t recvs_left_;
    uint32_t req_id_ = 0;
};

}  // namespace wirepeer
