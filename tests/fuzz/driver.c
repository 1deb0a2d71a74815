/* driver.c - a main() for the fuzz targets when libFuzzer is not
 * available (e.g. gcc builds): runs LLVMFuzzerTestOneInput once per file
 * named on the command line, so the harnesses keep compiling and the
 * corpus keeps passing as a regression suite. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		unsigned char *buf;
		long n;

		if (!f) {
			perror(argv[i]);
			return 1;
		}
		if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
		    fseek(f, 0, SEEK_SET) != 0) {
			fclose(f);
			return 1;
		}
		buf = malloc((size_t)n + 1);
		if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
			fclose(f);
			free(buf);
			return 1;
		}
		fclose(f);
		/* named first, so that a crash or abort says which input */
		fprintf(stderr, "input %s\n", argv[i]);
		LLVMFuzzerTestOneInput(buf, (size_t)n);
		free(buf);
	}
	printf("ran %d input(s)\n", argc - 1);
	return 0;
}
