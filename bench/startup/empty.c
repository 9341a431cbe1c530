/* The floor of starting a process: an empty C program. */
int main(void) { return 0; }
