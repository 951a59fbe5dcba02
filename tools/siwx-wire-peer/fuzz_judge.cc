// The reply verdict of siwx-wire-fuzz (see fuzz_judge.h).
#include "fuzz_judge.h"

extern "C" {
#include <siwx/proto/rdmap.h>
}

namespace wirepeer {

void ConnJudge::Issued(const Request& r) {
    if (r.kind == Request::Kind::kRead) reads_.push_back(r);
    if (r.kind == Request::Kind::kAtomic) atomics_.push_back(r);
}

bool ConnJudge::Fail(std::string why) {
    if (why_.empty()) why_ = std::move(why);
    return false;
}

bool ConnJudge::Feed(const uint8_t* p, size_t n) {
    if (!why_.empty()) return false;
    if (received_.size() < (1u << 20)) received_.insert(received_.end(), p, p + n);
    reader_.Feed(p, n);
    for (; seen_ < reader_.messages().size(); seen_++)
        if (!Message(reader_.messages()[seen_])) return false;
    if (reader_.broken())
        return Fail("the reply is not a valid FPDU stream: " + DescribeTerm(reader_.parse_error()));
    return true;
}

bool ConnJudge::Message(const siwx_rx_seg& m) {
    const siwx_ddp_hdr& d = m.ddp;
    if (term_) return Fail("a message after the Terminate: " + Describe(m));
    if (d.opcode == SIWX_OP_READ_RESP && d.tagged) {
        responses_++;
        // A Read Response places into the sink of the oldest Read Request
        // (RFC 5040 section 4.5), segment after segment.
        if (reads_.empty())
            return risky_ ? true : Fail("a Read Response nobody asked for: " + Describe(m));
        const Request& r = reads_.front();
        if (d.stag != r.sink_stag || d.to != r.sink_to + read_got_)
            return risky_ ? true : Fail("a Read Response to the wrong sink: " + Describe(m));
        read_got_ += m.payload_len;
        if (!d.last) return true;
        if (read_got_ != r.size)
            return Fail("a Read Response of " + std::to_string(read_got_) + " octets, asked " +
                        std::to_string(r.size));
        reads_.pop_front();
        read_got_ = 0;
        return true;
    }
    if (d.opcode == SIWX_OP_ATOMIC_RESP && !d.tagged && d.qn == SIWX_QN_ATOMIC_RESP) {
        responses_++;
        if (atomics_.empty() || atomics_.front().req_id != m.u.atomic_resp.req_id)
            return risky_ ? true : Fail("an Atomic Response to no request of ours: " + Describe(m));
        atomics_.pop_front();
        return true;
    }
    if (d.opcode == SIWX_OP_TERMINATE && !d.tagged && d.qn == SIWX_QN_TERM) {
        term_ = true;
        term_msg_ = m;
        if (!risky_) return Fail("a Terminate on a valid stream: " + Describe(m));
        return true;
    }
    return Fail("a message siwx has no business sending: " + Describe(m));
}

}  // namespace wirepeer
