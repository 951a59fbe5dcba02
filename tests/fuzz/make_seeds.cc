// Writes the fuzz seed corpus: well-formed streams built with the core's
// own encoders (every message type, multi-segment messages, MPA frames),
// each prefixed with the fuzz target's control octet.
#include <cstdio>
#include <string>
#include <vector>

extern "C" {
#include <siwx/proto/mpa.h>
#include <siwx/proto/rdmap.h>
#include <siwx/proto/rfc7306.h>
#include <siwx/proto/term.h>
#include <siwx/proto/tx.h>
}

namespace {

using Bytes = std::vector<uint8_t>;

void Append(Bytes& out, const siwx_ddp_hdr& h, const Bytes& rdmap_hdr, const Bytes& payload,
            uint32_t mulpdu, bool crc) {
    siwx_tx_msg m;
    siwx_tx_msg_init(&m, &h, rdmap_hdr.empty() ? nullptr : rdmap_hdr.data(),
                     uint32_t(rdmap_hdr.size()), uint32_t(payload.size()));
    siwx_tx_seg s;
    while (siwx_tx_next(&m, mulpdu, &s)) {
        Bytes fpdu(siwx_mpa_fpdu_len(s.ulpdu_len));
        siwx_tx_fpdu(&s, payload.data(), crc, fpdu.data());
        out.insert(out.end(), fpdu.begin(), fpdu.end());
    }
}

siwx_ddp_hdr Untagged(uint8_t op, uint32_t qn, uint32_t msn) {
    siwx_ddp_hdr h{};
    h.opcode = op;
    h.qn = qn;
    h.msn = msn;
    return h;
}

siwx_ddp_hdr Tagged(uint8_t op, uint32_t stag, uint64_t to) {
    siwx_ddp_hdr h{};
    h.opcode = op;
    h.tagged = true;
    h.stag = stag;
    h.to = to;
    return h;
}

void Write(const std::string& dir, const std::string& name, uint8_t ctl, const Bytes& body) {
    std::string path = dir + "/" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) {
        std::perror(path.c_str());
        std::exit(1);
    }
    std::fputc(ctl, f);
    std::fwrite(body.data(), 1, body.size(), f);
    std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    std::string dir = argv[1];
    Bytes payload(300);
    for (size_t i = 0; i < payload.size(); ++i) payload[i] = uint8_t(i * 7);

    for (bool crc : {true, false}) {
        Bytes all;
        Append(all, Tagged(SIWX_OP_WRITE, 0x100, 0x2000), {}, payload, 128, crc);
        Append(all, Untagged(SIWX_OP_SEND, 0, 1), {}, payload, 100, crc);
        Append(all, Untagged(SIWX_OP_SEND_SE_INVAL, 0, 2), {}, {1, 2, 3}, 1000, crc);
        siwx_read_req rr{1, 0x10, 64, 2, 0x20};
        Bytes rrh(SIWX_READ_REQ_LEN);
        siwx_read_req_encode(&rr, rrh.data());
        Append(all, Untagged(SIWX_OP_READ_REQ, 1, 1), rrh, {}, 1000, crc);
        Append(all, Tagged(SIWX_OP_READ_RESP, 0x300, 0x40), {}, payload, 1000, crc);
        Append(all, Untagged(SIWX_OP_IMM_SE, 0, 3), {0xca, 0xfe, 0, 1, 0, 0, 0, 0}, {}, 1000, crc);
        siwx_atomic_req ar;
        siwx_atomic_req_fetch_add(&ar, 5, 0x400, 0x8, 1, 0x8000000080000000ULL);
        Bytes arh(SIWX_ATOMIC_REQ_LEN);
        siwx_atomic_req_encode(&ar, arh.data());
        Append(all, Untagged(SIWX_OP_ATOMIC_REQ, 1, 2), arh, {}, 1000, crc);
        siwx_atomic_resp as{5, 41};
        Bytes ash(SIWX_ATOMIC_RESP_LEN);
        siwx_atomic_resp_encode(&as, ash.data());
        Append(all, Untagged(SIWX_OP_ATOMIC_RESP, 3, 1), ash, {}, 1000, crc);
        Bytes offending(SIWX_DDP_UNTAGGED_HDR_LEN);
        siwx_ddp_hdr oh = Untagged(SIWX_OP_ATOMIC_REQ, 1, 2);
        siwx_ddp_encode(&oh, offending.data());
        siwx_term_hdr th;
        siwx_term_hdr_build(&th, siwx_term_make(0, 2, 7), 70, offending.data(), offending.size(),
                            nullptr);
        Bytes thb(siwx_term_hdr_len(&th));
        siwx_term_hdr_encode(&th, thb.data());
        Append(all, Untagged(SIWX_OP_TERMINATE, 2, 1), thb, {}, 1000, crc);
        Write(dir, crc ? "all-messages-crc" : "all-messages-nocrc", crc ? 0x0f : 0x0e, all);
    }
    siwx_mpa_rr req{};
    req.crc = true;
    req.rev = 2;
    req.enhanced = true;
    req.p2p = true;
    req.rtr = SIWX_MPA_RTR_WRITE;
    req.ird = 16;
    req.ord = 16;
    Bytes pd = {'s', 'i', 'w', 'x'};
    req.pd = pd.data();
    req.pd_len = uint16_t(pd.size());
    Bytes frame(siwx_mpa_rr_len(&req));
    siwx_mpa_rr_encode(&req, frame.data());
    Write(dir, "mpa-request-v2", 0x01, frame);
    return 0;
}
