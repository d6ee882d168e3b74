/* ground_height.c: what a server emulator asks trnbake for, the ground under a spawn.
 *
 *   cc -std=c99 -I crates/capi/include crates/capi/tests/c/ground_height.c \
 *      -L target/release -ltrnbake -Wl,-rpath,"$PWD/target/release" -lm -o ground_height
 *   ./ground_height ../shared/data/swg/terrain/tatooine.trn ../shared/data/swg
 *
 * Prints the height at a spawn point, checks a batch against single calls, asks for water,
 * bakes a small region, and shows the error path. Exits non-zero when a check fails
 * (crates/capi/tests/c_programs.rs compiles and runs it in `cargo test`). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "trnbake.h"

static int failures = 0;

static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "FAILED: %s (last error: %s)\n", what,
                trnbake_last_error() ? trnbake_last_error() : "none");
        failures++;
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE.trn [DATA_ROOT]\n", argv[0]);
        return 2;
    }
    /* Load once at server start; NULL data root = the folder above the file's terrain/. */
    TrnbakeTerrain *t = trnbake_terrain_open(argv[1], argc > 2 ? argv[2] : NULL);
    if (!t) {
        fprintf(stderr, "cannot open terrain: %s\n", trnbake_last_error());
        return 1;
    }
    printf("map width: %.0f m\n", trnbake_map_width(t));

    /* The ground under a spawn (world metres: x east, z north). */
    float h = trnbake_height_at(t, 3528.0f, -4804.0f);
    printf("height at 3528,-4804: %.4f\n", h);
    check(fabsf(h - 4.0399f) < 0.00005f, "the spawn height is 4.0399");

    /* Many spawns at once (parallel inside): equal to single calls, bit for bit. */
    enum { N = 64 };
    float xs[N], zs[N], hs[N];
    for (int i = 0; i < N; i++) {
        xs[i] = 3528.0f + 37.5f * (float)(i % 8) - 150.0f;
        zs[i] = -4804.0f + 41.25f * (float)(i / 8) - 150.0f;
    }
    check(trnbake_heights(t, N, xs, zs, hs) == 0, "trnbake_heights succeeds");
    int equal = 1;
    for (int i = 0; i < N; i++) {
        if (hs[i] != trnbake_height_at(t, xs[i], zs[i])) equal = 0;
    }
    check(equal, "the batch equals single calls");
    printf("batch of %d: equal to single calls: %s\n", N, equal ? "yes" : "no");

    /* Water: 1 and the surface height where a water table covers the point, 0 where none
     * does (the spawn is dry; a local water table lies at 6677,5457). */
    float water = -1.0f;
    check(trnbake_water_height_at(t, 3528.0f, -4804.0f, &water) == 0, "no water at the spawn");
    check(trnbake_water_height_at(t, 6677.0f, 5457.0f, &water) == 1, "water at 6677,5457");
    printf("water at 3528,-4804: none; at 6677,5457: %.4f\n", water);

    /* A region of 5 x 4 posts 2 m apart, row 0 south: post (i, j) is out[j * 5 + i]. */
    float region[5 * 4];
    check(trnbake_bake_region(t, 3524.0, -4806.0, 2.0, 5, 4, region, 5 * 4) == 0, "the region bakes");
    /* Post (2, 1) is (3528, -4804), the spawn. */
    check(region[1 * 5 + 2] == h, "the region's post (2, 1) is the spawn height");
    printf("region 5x4 at 2 m: post (2,1) = %.4f\n", region[1 * 5 + 2]);
    check(trnbake_bake_region(t, 3524.0, -4806.0, 2.0, 5, 4, region, 19) != 0, "a short buffer is an error");
    printf("short buffer: %s\n", trnbake_last_error());

    trnbake_terrain_free(t);

    /* The error path: NULL, and a message naming the file. */
    TrnbakeTerrain *missing = trnbake_terrain_open("no/such/planet.trn", NULL);
    check(missing == NULL, "a missing file gives NULL");
    const char *err = trnbake_last_error();
    check(err != NULL && strstr(err, "no/such/planet.trn") != NULL, "the message names the file");
    printf("missing file: %s\n", err ? err : "(no message)");

    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
