/* smllm's native hook client: the installed ``smllm-hook`` of Claude Code's hooks.
 *
 * It hands one hook call to smllm's resident worker over a Unix socket, or runs the Python
 * hook (SMLLM_FALLBACK) itself whenever no genuine worker takes the call. The protocol,
 * the socket's place and the reasons are smllm/worker/__init__.py's: that module is the
 * specification, this file follows it.
 *
 * Built by smllm.worker.native with ``-include <header>``, which defines the install's
 * values (the Python hook's path, the worker's tag, the waits, the hooks' deadlines, the
 * gating events) and the protocol's constants, taken from the Python modules.
 *
 * Plain C99 and POSIX/Linux, libc only: SHA-256 and HMAC-SHA256 are below. The client
 * never reads stdin and never writes stdout: they go to the worker, or to the Python hook.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#ifndef SMLLM_FALLBACK
#error "client.c is built with -include <header> (smllm.worker.native.header)"
#endif

/* what smllm.worker.native.is_current looks for in a built client */
__attribute__((used)) static const char smllm_stamp[] = "smllm-stamp:" SMLLM_STAMP;

#define NONCE 32
#define MAC_SIZE 32
#define PID_SIZE 8
#define LIT(s) (sizeof(s) - 1) /* the length of a string literal (it may hold a NUL) */
#define ACK_SIZE (LIT(SMLLM_ACK) + NONCE + PID_SIZE + MAC_SIZE)
#define KEY_READ_MAX 256

extern char **environ;

/* ------------------------------------------------------------------ SHA-256, HMAC */

typedef struct {
    uint32_t h[8];
    uint64_t length; /* bytes hashed so far */
    unsigned char block[64];
    size_t fill;
} sha256_ctx;

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(uint32_t h[8], const unsigned char *p)
{
    uint32_t w[64], a, b, c, d, e, f, g, k, t1, t2;
    int i;
    for (i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (i = 16; i < 64; i++) {
        uint32_t s0 = ROTR(w[i - 15], 7) ^ ROTR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROTR(w[i - 2], 17) ^ ROTR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (i = 0; i < 64; i++) {
        t1 = k + (ROTR(e, 6) ^ ROTR(e, 11) ^ ROTR(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] +
             w[i];
        t2 = (ROTR(a, 2) ^ ROTR(a, 13) ^ ROTR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

static void sha256_init(sha256_ctx *c)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, iv, sizeof iv);
    c->length = 0;
    c->fill = 0;
}

static void sha256_update(sha256_ctx *c, const void *data, size_t n)
{
    const unsigned char *p = data;
    c->length += n;
    while (n > 0) {
        size_t take = 64 - c->fill < n ? 64 - c->fill : n;
        memcpy(c->block + c->fill, p, take);
        c->fill += take, p += take, n -= take;
        if (c->fill == 64) {
            sha256_block(c->h, c->block);
            c->fill = 0;
        }
    }
}

static void sha256_final(sha256_ctx *c, unsigned char out[32])
{
    uint64_t bits = c->length * 8;
    unsigned char pad[72] = {0x80};
    size_t padding = (c->fill < 56 ? 56 : 120) - c->fill, i;
    for (i = 0; i < 8; i++)
        pad[padding + i] = (unsigned char)(bits >> (56 - 8 * i));
    sha256_update(c, pad, padding + 8);
    for (i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(c->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(c->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(c->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)c->h[i];
    }
}

typedef struct {
    sha256_ctx inner, outer;
} hmac_ctx;

/* RFC 2104 with SHA-256: a key longer than a block is hashed first */
static void hmac_init(hmac_ctx *m, const unsigned char *key, size_t n)
{
    unsigned char block[64] = {0}, pad[64];
    int i;
    if (n > 64) {
        sha256_ctx c;
        sha256_init(&c);
        sha256_update(&c, key, n);
        sha256_final(&c, block);
    } else if (n > 0) {
        memcpy(block, key, n);
    }
    for (i = 0; i < 64; i++)
        pad[i] = block[i] ^ 0x36;
    sha256_init(&m->inner);
    sha256_update(&m->inner, pad, 64);
    for (i = 0; i < 64; i++)
        pad[i] = block[i] ^ 0x5c;
    sha256_init(&m->outer);
    sha256_update(&m->outer, pad, 64);
}

static void hmac_update(hmac_ctx *m, const void *data, size_t n)
{
    sha256_update(&m->inner, data, n);
}

static void hmac_final(hmac_ctx *m, unsigned char out[MAC_SIZE])
{
    unsigned char digest[32];
    sha256_final(&m->inner, digest);
    sha256_update(&m->outer, digest, 32);
    sha256_final(&m->outer, out);
}

/* equal, in a time that does not depend on where they differ */
static int same_mac(const unsigned char *a, const unsigned char *b)
{
    volatile unsigned char diff = 0;
    size_t i;
    for (i = 0; i < MAC_SIZE; i++)
        diff |= a[i] ^ b[i];
    return diff == 0;
}

/* ------------------------------------------------------------------ the call's context */

static int g_argc;
static char **g_argv;

struct deadline_row {
    const char *event;
    double seconds;
};
static const struct deadline_row DEADLINES[] = {SMLLM_DEADLINES {NULL, 0.0}};
static const char *const GATING[] = {SMLLM_GATING NULL};

static const char *event(void)
{
    return g_argc >= 2 ? g_argv[1] : "";
}

static int gating(void)
{
    int i;
    for (i = 0; GATING[i] != NULL; i++)
        if (strcmp(GATING[i], event()) == 0)
            return 1;
    return 0;
}

/* how long to wait for DONE (milliseconds): the hook's deadline and the grace */
static long long deadline_ms(void)
{
    double seconds = SMLLM_DEFAULT_DEADLINE_S;
    int i;
    for (i = 0; DEADLINES[i].event != NULL; i++)
        if (strcmp(DEADLINES[i].event, event()) == 0)
            seconds = DEADLINES[i].seconds;
    return (long long)((seconds + SMLLM_GRACE_S) * 1000.0);
}

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* one line on stderr, pieces joined (best effort: nothing else can be done) */
static void say(const char *a, const char *b, const char *c, const char *d)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "%s%s%s%s\n", a, b ? b : "", c ? c : "", d ? d : "");
    if (n > 0) {
        ssize_t ignored = write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n
                                                                          : sizeof line - 1);
        (void)ignored;
    }
}

/* ------------------------------------------------------------------ the Python hook */

#define PLAIN NULL

/* Run the Python hook with the same arguments, ``--worker why`` appended unless plain. */
static void fallback(const char *why) __attribute__((noreturn));
static void fallback(const char *why)
{
    char **args = calloc((size_t)g_argc + 3, sizeof *args);
    int i, n = 0;
    if (args != NULL) {
        args[n++] = (char *)SMLLM_FALLBACK;
        for (i = 1; i < g_argc; i++)
            args[n++] = g_argv[i];
        if (why != PLAIN) {
            args[n++] = (char *)SMLLM_FLAG;
            args[n++] = (char *)why;
        }
        args[n] = NULL;
        execv(SMLLM_FALLBACK, args);
    }
    if (gating()) {
        say("smllm hook could not start (" SMLLM_FALLBACK ": ", strerror(errno),
            "): the call is denied", NULL);
        exit(2);
    }
    exit(0);
}

/* The worker lost a call it was handed (it may have run): the Python hook must not run it
 * again. A gating hook fails closed. */
static void lost(const char *why) __attribute__((noreturn));
static void lost(const char *why)
{
    if (gating()) {
        say("smllm: the worker lost this call (", why, "): smllm denies it (fail closed)",
            NULL);
        exit(2);
    }
    say("smllm: the worker lost this call (", why, ")", NULL);
    exit(0);
}

/* ------------------------------------------------------------------ the key folder */

static int is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Python's str.isspace in ASCII: also the four separators 0x1c..0x1f */
static int is_str_space(unsigned char c)
{
    return is_space(c) || (c >= 0x1c && c <= 0x1f);
}

/* whether an absolute --home is what os.path.abspath would return (no "//", "/./",
 * "/../", no trailing "/." "/.." or "/" but for "/" itself) */
static int is_normal(const char *p)
{
    size_t n = strlen(p);
    if (strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../"))
        return 0;
    if ((n >= 2 && strcmp(p + n - 2, "/.") == 0) || (n >= 3 && strcmp(p + n - 3, "/..") == 0))
        return 0;
    return n == 1 || p[n - 1] != '/';
}

/* ``a`` joined with ``b`` as os.path.join joins them (``a`` absolute, ``b`` relative) */
static int join(char *out, size_t size, const char *a, size_t alen, const char *b)
{
    int slash = alen == 0 || a[alen - 1] != '/';
    int n = snprintf(out, size, "%.*s%s%s", (int)alen, a, slash ? "/" : "", b);
    return n > 0 && (size_t)n < size;
}

/* smllm's key folder as the Python hook finds it (paths.key_root() after pin_home); 0
 * where the client cannot be sure of it */
static int key_folder(char *out, size_t size, const char *home)
{
    const char *xdg, *user;
    size_t n;
    if (home[0] == '/' && strcmp(home, SMLLM_PLATFORM_HOME) != 0) {
        if (!is_normal(home))
            return 0;
        return join(out, size, home, strlen(home), SMLLM_KEY_FOLDER);
    }
    xdg = getenv("XDG_STATE_HOME");
    if (xdg != NULL) {
        while (is_str_space((unsigned char)*xdg))
            xdg++;
        n = strlen(xdg);
        while (n > 0 && is_str_space((unsigned char)xdg[n - 1]))
            n--;
        /* Python would also strip non-ASCII spaces: not sure of the folder then */
        if (n > 0 && ((unsigned char)xdg[0] >= 0x80 || (unsigned char)xdg[n - 1] >= 0x80))
            return 0;
        if (n > 0 && xdg[0] == '/') {
            char base[PATH_MAX];
            return join(base, sizeof base, xdg, n, SMLLM_APP) &&
                   join(out, size, base, strlen(base), SMLLM_KEY_FOLDER);
        }
    }
    user = getenv("HOME");
    if (user == NULL || user[0] != '/')
        return 0;
    n = strlen(user);
    while (n > 0 && user[n - 1] == '/')
        n--;
    return join(out, size, user, n, ".local/state/" SMLLM_APP "/" SMLLM_KEY_FOLDER);
}

/* ------------------------------------------------------------------ the key */

static int hex_digit(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* smllm's journal key (keyed._parse): 64 lowercase hex digits, ASCII spaces around */
static int read_key(const char *path, unsigned char key[32])
{
    unsigned char text[KEY_READ_MAX + 1];
    size_t got = 0, start = 0, end;
    struct stat st;
    size_t i;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK), ok = 0;
    if (fd < 0)
        return 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        ok = 1;
        while (got < sizeof text) {
            ssize_t r = read(fd, text + got, sizeof text - got);
            if (r > 0)
                got += (size_t)r;
            else if (r == 0)
                break;
            else if (errno != EINTR) {
                ok = 0;
                break;
            }
        }
    }
    close(fd);
    if (!ok || got > KEY_READ_MAX)
        return 0;
    end = got;
    while (start < end && is_space(text[start]))
        start++;
    while (end > start && is_space(text[end - 1]))
        end--;
    if (end - start != 64)
        return 0;
    for (i = 0; i < 32; i++) {
        int hi = hex_digit(text[start + 2 * i]), lo = hex_digit(text[start + 2 * i + 1]);
        if (hi < 0 || lo < 0)
            return 0;
        key[i] = (unsigned char)(hi << 4 | lo);
    }
    return 1;
}

/* ------------------------------------------------------------------ the connection */

enum { GOT, TIMEOUT, CLOSED, FAILED, WRONG };

/* Read ``n`` bytes by ``until`` (CLOCK_MONOTONIC ms), the first of them ``prefix``. */
static int receive(int fd, unsigned char *buf, size_t n, long long until, const char *prefix,
                   size_t prefix_len)
{
    size_t got = 0, i;
    while (got < n) {
        struct pollfd p;
        long long left = until - now_ms();
        ssize_t r;
        int k;
        if (left <= 0)
            return TIMEOUT;
        p.fd = fd, p.events = POLLIN, p.revents = 0;
        k = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (k < 0 && errno != EINTR)
            return FAILED;
        if (k <= 0)
            continue;
        r = recv(fd, buf + got, n - got, 0);
        if (r == 0)
            return CLOSED;
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
                continue;
            return FAILED;
        }
        for (i = got; i < got + (size_t)r && i < prefix_len; i++)
            if (buf[i] != (unsigned char)prefix[i])
                return WRONG;
        got += (size_t)r;
    }
    return GOT;
}

/* Send every byte of ``iov``, the first sendmsg carrying ``fds`` (SCM_RIGHTS) when not
 * NULL; 0 when the peer stops reading for the ack wait, or on any error. */
static int send_all(int fd, struct iovec *iov, int count, const int *fds, int nfds)
{
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(4 * sizeof(int))];
    } control;
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    if (fds != NULL) {
        struct cmsghdr *c;
        memset(&control, 0, sizeof control);
        msg.msg_control = control.buf;
        msg.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
        c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
        memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
    }
    while (count > 0) {
        ssize_t r;
        msg.msg_iov = iov;
        msg.msg_iovlen = (size_t)count;
        r = sendmsg(fd, &msg, MSG_NOSIGNAL);
        if (r < 0) {
            struct pollfd p;
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                return 0;
            p.fd = fd, p.events = POLLOUT, p.revents = 0;
            if (poll(&p, 1, SMLLM_ACK_WAIT_MS) == 0)
                return 0;
            continue;
        }
        msg.msg_control = NULL, msg.msg_controllen = 0; /* the descriptors went along */
        while (count > 0 && (size_t)r >= iov->iov_len) {
            r -= (ssize_t)iov->iov_len;
            iov++, count--;
        }
        if (count > 0) {
            iov->iov_base = (char *)iov->iov_base + r;
            iov->iov_len -= (size_t)r;
        }
    }
    return 1;
}

/* The call (smllm.worker.encode_call): the umask, the count of arguments, the arguments
 * (the Python hook first), the environment's NAME=VALUE entries, joined by NUL. */
static unsigned char *encode_call(size_t *length)
{
    char head[2][24];
    mode_t mask = umask(0);
    size_t total, at = 0, part;
    unsigned char *call;
    char **e;
    int i;
    umask(mask);
    snprintf(head[0], sizeof head[0], "%u", (unsigned)mask);
    snprintf(head[1], sizeof head[1], "%d", g_argc);
    total = strlen(head[0]) + 1 + strlen(head[1]) + 1 + LIT(SMLLM_FALLBACK);
    for (i = 1; i < g_argc; i++) {
        total += 1 + strlen(g_argv[i]);
        if (total > SMLLM_CALL_LIMIT)
            return NULL;
    }
    for (e = environ; *e != NULL; e++) {
        if (strchr(*e, '=') == NULL)
            continue; /* not a variable: Python's os.environ leaves it out too */
        total += 1 + strlen(*e);
        if (total > SMLLM_CALL_LIMIT)
            return NULL;
    }
    call = malloc(total);
    if (call == NULL)
        return NULL;
#define PUT(s, n) (part = (n), memcpy(call + at, (s), part), at += part)
    PUT(head[0], strlen(head[0]) + 1);
    PUT(head[1], strlen(head[1]) + 1);
    PUT(SMLLM_FALLBACK, LIT(SMLLM_FALLBACK));
    for (i = 1; i < g_argc; i++) {
        call[at++] = '\0';
        PUT(g_argv[i], strlen(g_argv[i]));
    }
    for (e = environ; *e != NULL; e++) {
        if (strchr(*e, '=') == NULL)
            continue;
        call[at++] = '\0';
        PUT(*e, strlen(*e));
    }
#undef PUT
    *length = at;
    return call;
}

static void put_le32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16), p[3] = (unsigned char)(v >> 24);
}

/* ------------------------------------------------------------------ main */

static int wants_python(int argc, char **argv)
{
    const char *off = getenv(SMLLM_SWITCH);
    int i;
    if (argc < 4 || strcmp(argv[argc - 2], "--home") != 0)
        return 1;
    if (off != NULL && strcmp(off, "0") == 0)
        return 1;
    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "--harness") == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    char folder[PATH_MAX], path[PATH_MAX];
    const char *where = path;
    unsigned char key[32], hello[LIT(SMLLM_HELLO) + NONCE], ack[ACK_SIZE], mac[MAC_SIZE];
    unsigned char head[LIT(SMLLM_GO) + 4 + MAC_SIZE], done[LIT(SMLLM_DONE) + 1];
    const unsigned char *n2, *pid8;
    unsigned char *call;
    struct sockaddr_un addr;
    struct iovec iov[2];
    struct stat st;
    hmac_ctx m;
    size_t length, got;
    uint64_t pid = 0;
    int sock, dir = -1, cwd, fds[4], i;

    g_argc = argc, g_argv = argv;
    /* the hook's stdin, stdout and stderr must be open before the client opens anything:
     * else its own descriptors would take their numbers, and go to the worker as them */
    if (wants_python(argc, argv) || fstat(0, &st) != 0 || fstat(1, &st) != 0 ||
        fstat(2, &st) != 0)
        fallback(PLAIN);

    /* the key, in the Python hook's key folder */
    if (!key_folder(folder, sizeof folder, argv[argc - 1]) ||
        !join(path, sizeof path, folder, strlen(folder), SMLLM_KEY_NAME) ||
        !read_key(path, key))
        fallback(PLAIN);

    /* the worker's socket, beside it: through the folder's descriptor when too long */
    if (!join(path, sizeof path, folder, strlen(folder), "worker-" SMLLM_TAG ".sock"))
        fallback(PLAIN);
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (strlen(path) >= SMLLM_ADDRESS_MAX) {
        dir = open(folder, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
            fallback(PLAIN);
        snprintf(addr.sun_path, sizeof addr.sun_path, "/proc/self/fd/%d/worker-%s.sock", dir,
                 SMLLM_TAG);
        where = addr.sun_path;
    } else {
        memcpy(addr.sun_path, path, strlen(path) + 1);
    }
    sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (sock < 0)
        fallback(PLAIN);
    if (connect(sock, (struct sockaddr *)&addr, sizeof addr) != 0)
        fallback(errno == ENOENT || errno == ECONNREFUSED ? SMLLM_START : PLAIN);

    /* HELLO n1 -> ACK n2 pid MAC(ack n1 n2 pid) */
    memcpy(hello, SMLLM_HELLO, LIT(SMLLM_HELLO));
    for (got = 0; got < NONCE;) {
        ssize_t r = getrandom(hello + LIT(SMLLM_HELLO) + got, NONCE - got, 0);
        if (r < 0 && errno != EINTR)
            fallback(PLAIN);
        if (r > 0)
            got += (size_t)r;
    }
    iov[0].iov_base = hello, iov[0].iov_len = sizeof hello;
    if (!send_all(sock, iov, 1, NULL, 0))
        fallback(PLAIN);
    switch (receive(sock, ack, sizeof ack, now_ms() + SMLLM_ACK_WAIT_MS, SMLLM_ACK,
                    LIT(SMLLM_ACK))) {
    case GOT:
        break;
    case TIMEOUT: /* a stopped or stuck worker: retire its socket, start another */
        unlink(where);
        fallback(SMLLM_START);
    case WRONG:
        fallback(SMLLM_FOREIGN);
    default:
        fallback(PLAIN);
    }
    n2 = ack + LIT(SMLLM_ACK);
    pid8 = n2 + NONCE;
    hmac_init(&m, key, sizeof key);
    hmac_update(&m, SMLLM_DOMAIN "ack", LIT(SMLLM_DOMAIN "ack"));
    hmac_update(&m, hello + LIT(SMLLM_HELLO), NONCE);
    hmac_update(&m, n2, NONCE + PID_SIZE);
    hmac_final(&m, mac);
    if (!same_mac(mac, pid8 + PID_SIZE))
        fallback(SMLLM_FOREIGN);
    for (i = PID_SIZE - 1; i >= 0; i--)
        pid = pid << 8 | pid8[i];
    if (pid <= 1 || pid > INT_MAX) /* no child's pid: never kill(-1) or a group */
        fallback(PLAIN);

    /* GO len MAC(go n2 call) call, with stdin, stdout, stderr and the working folder */
    call = encode_call(&length);
    if (call == NULL)
        fallback(PLAIN);
    cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cwd < 0)
        fallback(PLAIN);
    memcpy(head, SMLLM_GO, LIT(SMLLM_GO));
    put_le32(head + LIT(SMLLM_GO), (uint32_t)length);
    hmac_init(&m, key, sizeof key);
    hmac_update(&m, SMLLM_DOMAIN "go", LIT(SMLLM_DOMAIN "go"));
    hmac_update(&m, n2, NONCE);
    hmac_update(&m, call, length);
    hmac_final(&m, head + LIT(SMLLM_GO) + 4);
    fds[0] = 0, fds[1] = 1, fds[2] = 2, fds[3] = cwd;
    iov[0].iov_base = head, iov[0].iov_len = sizeof head;
    iov[1].iov_base = call, iov[1].iov_len = length;
    if (!send_all(sock, iov, 2, fds, 4))
        fallback(PLAIN);
    /* the call is delivered: from here on it is the worker's, never run again */
    free(call);
    close(cwd);
    if (dir >= 0)
        close(dir);

    /* DONE status */
    switch (receive(sock, done, sizeof done, now_ms() + deadline_ms(), SMLLM_DONE,
                    LIT(SMLLM_DONE))) {
    case GOT:
        return done[LIT(SMLLM_DONE)];
    case TIMEOUT:
        kill((pid_t)pid, SIGKILL);
        lost("no answer by the hook's deadline");
    case CLOSED:
        lost("the connection closed");
    case WRONG:
        lost("a malformed answer");
    default:
        lost(strerror(errno));
    }
}
