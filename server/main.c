/* vcapd entry point (placeholder until the serving issue lands). */
#include <stdio.h>

int main(void)
{
	fprintf(stderr, "vcapd: the daemon is not built yet (see the open issues)\n");
	return 1;
}
