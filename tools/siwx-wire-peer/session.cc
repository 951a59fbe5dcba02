// TCP and MPA setup of siwx-wire-peer (see session.h).
#include "session.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern "C" {
#include <siwx/proto/bytes.h>
#include <siwx/proto/mpa.h>
}

namespace wirepeer {

namespace {

constexpr int kMpaTimeoutMs = 20000;

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

Session::~Session() {
    if (fd_ >= 0) close(fd_);
}

bool Session::Connect(const std::string& host, uint16_t port, std::string* err) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* ai = nullptr;
    const int r = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &ai);
    if (r) {
        *err = "cannot resolve " + host + ": " + gai_strerror(r);
        return false;
    }
    fd_ = socket(ai->ai_family, SOCK_STREAM, IPPROTO_TCP);
    if (fd_ < 0 || connect(fd_, ai->ai_addr, ai->ai_addrlen)) {
        *err = Errno("connect");
        freeaddrinfo(ai);
        return false;
    }
    freeaddrinfo(ai);
    // One FPDU per segment, sent at once: as an RNIC would.
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return true;
}

bool Session::Mpa(const Bytes& pd, uint16_t rd, Bytes* reply_pd, std::string* err) {
    // What siwx itself asks for by default (kernel/siwx_main.c): MPA
    // revision 2 with RFC 6581 IRD/ORD, CRC, no markers, no p2p RTR.
    siwx_mpa_policy pol{};
    pol.crc = true;
    pol.rev = 2;
    pol.max_ird = rd;
    pol.max_ord = rd;
    siwx_mpa_rr req{};
    siwx_mpa_make_request(&pol, rd, rd, pd.data(), uint16_t(pd.size()), &req);
    Bytes frame(siwx_mpa_rr_len(&req));
    if (frame.empty() || siwx_mpa_rr_encode(&req, frame.data()) != frame.size()) {
        *err = "cannot encode the MPA Request";
        return false;
    }
    if (!Send(frame, err)) return false;

    Bytes rep(SIWX_MPA_RR_HDR_LEN);
    if (!RecvExact(rep.data(), rep.size(), kMpaTimeoutMs, err)) return false;
    const uint16_t pd_len = siwx_get_be16(rep.data() + SIWX_MPA_RR_HDR_LEN - 2);
    if (pd_len > SIWX_MPA_MAX_PD_LEN) {
        *err = "MPA Reply PD_Length over 512";
        return false;
    }
    rep.resize(SIWX_MPA_RR_HDR_LEN + pd_len);
    if (!RecvExact(rep.data() + SIWX_MPA_RR_HDR_LEN, pd_len, kMpaTimeoutMs, err)) return false;
    siwx_mpa_rr rr{};
    siwx_term t{};
    size_t flen = 0;
    if (siwx_mpa_rr_decode(rep.data(), rep.size(), &rr, &flen, &t) != SIWX_PARSE_OK) {
        *err = "malformed MPA Reply: " + Hex(rep);
        return false;
    }
    switch (siwx_mpa_check_reply(&pol, &req, &rr, &conn_, &t)) {
        case SIWX_MPA_ACCEPTED:
            break;
        case SIWX_MPA_REJECTED:
            *err = "the MPA Reply rejects the connection";
            return false;
        default:
            *err = "invalid MPA Reply: " + Hex(rep);
            return false;
    }
    reply_pd->assign(rr.pd, rr.pd + rr.pd_len);
    return true;
}

bool Session::Send(const Bytes& b, std::string* err) {
    size_t done = 0;
    while (done < b.size()) {
        const ssize_t n = send(fd_, b.data() + done, b.size() - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            *err = Errno("send");
            return false;
        }
        done += size_t(n);
    }
    return true;
}

long Session::Recv(uint8_t* buf, size_t cap, int timeout_ms, std::string* err) {
    pollfd p{fd_, POLLIN, 0};
    const int r = poll(&p, 1, timeout_ms);
    if (r == 0) return -1;
    if (r < 0) {
        *err = Errno("poll");
        return -2;
    }
    const ssize_t n = recv(fd_, buf, cap, 0);
    if (n < 0) {
        *err = Errno("recv");
        return -2;
    }
    return long(n);
}

bool Session::RecvExact(uint8_t* buf, size_t n, int timeout_ms, std::string* err) {
    size_t done = 0;
    while (done < n) {
        const long r = Recv(buf + done, n - done, timeout_ms, err);
        if (r == -1) *err = "timeout waiting for the MPA Reply";
        if (r == 0) *err = "connection closed during MPA setup";
        if (r <= 0) return false;
        done += size_t(r);
    }
    return true;
}

}  // namespace wirepeer
