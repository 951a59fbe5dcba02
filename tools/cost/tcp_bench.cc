// siwx-tcp-bench: the TCP counterparts of siwx-imm-bench's small-message
// steps, for the cost instrument's baseline (tools/bench/bench --cost):
//
//   server: siwx-tcp-bench -s [-p PORT]
//   client: siwx-tcp-bench -c ADDR [-p PORT] -m lat|rate [-b BYTES] [-n ITERS] [-w WINDOW]
//
// lat:  ping-pong of BYTES-octet messages, ITERS round trips;
// rate: the client sends ITERS messages of BYTES octets, one send() each,
//       and the server, reading one message per recv(), returns a 1-octet
//       credit per WINDOW messages, as siwx-imm-bench's rate returns one
//       credit Send per window.
// Both ends sleep in the kernel (blocking sockets, TCP_NODELAY). The last
// line: "result,<mode>,tcp,<bytes>,<iters>,<us per iteration>".
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Options {
    bool server = false;
    std::string addr;
    std::string port = "18530";
    std::string mode = "lat";
    size_t bytes = 8;
    unsigned long iters = 1000;
    unsigned long window = 16;
};

[[noreturn]] void Die(const std::string& what) {
    std::fprintf(stderr, "siwx-tcp-bench: %s: %s\n", what.c_str(), std::strerror(errno));
    std::exit(1);
}

// The whole of @len octets, or exit.
void SendAll(int fd, const char* buf, size_t len) {
    while (len > 0) {
        const ssize_t n = send(fd, buf, len, 0);
        if (n <= 0) Die("send");
        buf += n;
        len -= static_cast<size_t>(n);
    }
}

void RecvAll(int fd, char* buf, size_t len) {
    while (len > 0) {
        const ssize_t n = recv(fd, buf, len, MSG_WAITALL);
        if (n <= 0) Die(n == 0 ? "recv: the peer closed" : "recv");
        buf += n;
        len -= static_cast<size_t>(n);
    }
}

void NoDelay(int fd) {
    const int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) Die("TCP_NODELAY");
}

int Connect(const Options& o) {
    // Numeric addresses only (the guests' links): no resolver in a static binary.
    sockaddr_storage ss{};
    socklen_t len;
    auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
    const auto port = htons(static_cast<uint16_t>(std::stoi(o.port)));
    if (inet_pton(AF_INET, o.addr.c_str(), &sin->sin_addr) == 1) {
        sin->sin_family = AF_INET;
        sin->sin_port = port;
        len = sizeof(*sin);
    } else if (inet_pton(AF_INET6, o.addr.c_str(), &sin6->sin6_addr) == 1) {
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = port;
        len = sizeof(*sin6);
    } else {
        errno = EINVAL;
        Die("'" + o.addr + "' is not a numeric IPv4 or IPv6 address");
    }
    const int fd = socket(ss.ss_family, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) Die("connect");
    NoDelay(fd);
    return fd;
}

int Accept(const Options& o) {
    const int lfd = socket(AF_INET6, SOCK_STREAM, 0);
    const int one = 1, zero = 0;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(static_cast<uint16_t>(std::stoi(o.port)));
    sa.sin6_addr = in6addr_any;
    if (bind(lfd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 || listen(lfd, 1) != 0)
        Die("listen");
    const int fd = accept(lfd, nullptr, nullptr);
    if (fd < 0) Die("accept");
    close(lfd);
    NoDelay(fd);
    return fd;
}

// The client tells the server what to run in a header of its own.
struct Header {
    char mode[8];
    uint64_t bytes, iters, window;
};

void Serve(int fd) {
    Header h{};
    RecvAll(fd, reinterpret_cast<char*>(&h), sizeof(h));
    std::vector<char> buf(h.bytes);
    const std::string mode(h.mode, strnlen(h.mode, sizeof(h.mode)));
    for (uint64_t i = 0; i < h.iters; ++i) {
        RecvAll(fd, buf.data(), buf.size());
        if (mode == "lat")
            SendAll(fd, buf.data(), buf.size());
        else if ((i + 1) % h.window == 0 || i + 1 == h.iters)
            SendAll(fd, "c", 1);
    }
}

double Run(int fd, const Options& o) {
    Header h{};
    std::strncpy(h.mode, o.mode.c_str(), sizeof(h.mode) - 1);
    h.bytes = o.bytes;
    h.iters = o.iters;
    h.window = o.window;
    SendAll(fd, reinterpret_cast<const char*>(&h), sizeof(h));
    std::vector<char> buf(o.bytes, 'x');
    char credit;
    const auto t0 = std::chrono::steady_clock::now();
    for (unsigned long i = 0; i < o.iters; ++i) {
        SendAll(fd, buf.data(), buf.size());
        if (o.mode == "lat")
            RecvAll(fd, buf.data(), buf.size());
        else if ((i + 1) % o.window == 0 || i + 1 == o.iters)
            RecvAll(fd, &credit, 1);
    }
    const std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
    return dt.count() / static_cast<double>(o.iters);
}

void Usage() {
    std::fprintf(stderr,
                 "usage: siwx-tcp-bench -s [-p PORT]\n"
                 "       siwx-tcp-bench -c ADDR [-p PORT] -m lat|rate [-b BYTES] [-n ITERS] "
                 "[-w WINDOW]\n");
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    int c;
    while ((c = getopt(argc, argv, "sc:p:m:b:n:w:")) != -1) {
        switch (c) {
            case 's':
                o.server = true;
                break;
            case 'c':
                o.addr = optarg;
                break;
            case 'p':
                o.port = optarg;
                break;
            case 'm':
                o.mode = optarg;
                break;
            case 'b':
                o.bytes = std::strtoul(optarg, nullptr, 0);
                break;
            case 'n':
                o.iters = std::strtoul(optarg, nullptr, 0);
                break;
            case 'w':
                o.window = std::strtoul(optarg, nullptr, 0);
                break;
            default:
                Usage();
        }
    }
    if (o.server == !o.addr.empty() || (o.mode != "lat" && o.mode != "rate") || o.bytes == 0 ||
        o.iters == 0 || o.window == 0)
        Usage();
    if (o.server) {
        const int fd = Accept(o);
        Serve(fd);
        close(fd);
        return 0;
    }
    const int fd = Connect(o);
    const double us = Run(fd, o);
    close(fd);
    std::printf("result,%s,tcp,%zu,%lu,%.3f\n", o.mode.c_str(), o.bytes, o.iters, us);
    return 0;
}
