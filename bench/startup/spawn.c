/* Runs a command ROUNDS times, each with posix_spawn and waitpid (as a
 * script starts a command, without a shell's own cost), and prints the
 * median and the fastest wall time of one run in microseconds.
 *   spawn ROUNDS CMD [ARGS...]                                          */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static int by_value(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: spawn ROUNDS CMD [ARGS...]\n");
        return 2;
    }
    int rounds = atoi(argv[1]);
    long *us = calloc(rounds, sizeof *us);
    /* The command's stdout goes nowhere: only its start is measured. */
    posix_spawn_file_actions_t quiet;
    posix_spawn_file_actions_init(&quiet);
    posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
    for (int i = 0; i < rounds; i++) {
        struct timespec a, b;
        pid_t pid;
        int status;
        clock_gettime(CLOCK_MONOTONIC, &a);
        if (posix_spawn(&pid, argv[2], &quiet, NULL, argv + 2, environ) != 0) {
            perror("posix_spawn");
            return 1;
        }
        waitpid(pid, &status, 0);
        clock_gettime(CLOCK_MONOTONIC, &b);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "%s failed\n", argv[2]);
            return 1;
        }
        us[i] = (b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000;
    }
    qsort(us, rounds, sizeof *us, by_value);
    printf("%ld %ld\n", us[rounds / 2], us[0]);
    return 0;
}
