/* The floor of a write: open a file, take its lock, append one line, make
 * it durable, as `discuss ask` must (and no more).
 *   append FILE                                                         */
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) return 1;
    static const char line[] =
        "{\"v\":1,\"kind\":\"message\",\"id\":\"msg_0\",\"at_ms\":1,\"by\":\"x\"}\n";
    if (write(fd, line, sizeof line - 1) != (ssize_t)(sizeof line - 1)) return 1;
    if (fdatasync(fd) != 0) return 1;
    return close(fd) != 0;
}
