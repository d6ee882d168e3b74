/* navmesh_path.c: a path over a navmesh set from C (the `navmesh` feature of libtrnbake).
 *
 *   cargo build --release -p trnbake-capi --features navmesh
 *   cc -std=c99 -DTRNBAKE_NAVMESH -I crates/capi/include crates/capi/tests/c/navmesh_path.c \
 *      -L target/release -ltrnbake -Wl,-rpath,"$PWD/target/release" -o navmesh_path
 *   ./navmesh_path tatooine-nav/navmesh.bin 40 40 220 200
 *
 * Prints the corners of the straight path (x,y,z, one a line, %.9g so they read back exactly),
 * then checks the other returns: the count alone, a buffer too small, an end off the mesh, a
 * NULL handle, a missing file. Exits non-zero when a check fails
 * (crates/capi/tests/navmesh_paths.rs compiles and runs it in `cargo test --features navmesh`). */
#include <stdio.h>
#include <stdlib.h>
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
    if (argc < 6) {
        fprintf(stderr, "usage: %s SET X0 Z0 X1 Z1\n", argv[0]);
        return 2;
    }
    TrnbakeNavmesh *nav = trnbake_navmesh_open(argv[1]);
    if (!nav) {
        fprintf(stderr, "cannot open navmesh: %s\n", trnbake_last_error());
        return 1;
    }
    float x0 = strtof(argv[2], NULL), z0 = strtof(argv[3], NULL);
    float x1 = strtof(argv[4], NULL), z1 = strtof(argv[5], NULL);

    /* The count alone (no buffer), then the corners into a buffer of that size. */
    size_t count = 0;
    int r = trnbake_navmesh_path(nav, x0, z0, x1, z1, 0, NULL, 0, &count);
    if (r == TRNBAKE_NO_PATH) {
        printf("no path\n");
    } else {
        check(r == TRNBAKE_PATH_SHORT_BUFFER && count >= 2, "a NULL buffer gets the count");
        size_t need = count;
        float *xyz = malloc(3 * need * sizeof *xyz);
        r = trnbake_navmesh_path(nav, x0, z0, x1, z1, 0, xyz, need, &count);
        check(r == TRNBAKE_PATH_FOUND && count == need, "the path fits the counted buffer");
        for (size_t i = 0; r == TRNBAKE_PATH_FOUND && i < count; i++) {
            printf("%.9g,%.9g,%.9g\n", xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]);
        }
        /* One corner short: the count needed comes back. */
        r = trnbake_navmesh_path(nav, x0, z0, x1, z1, 0, xyz, need - 1, &count);
        check(r == TRNBAKE_PATH_SHORT_BUFFER && count == need, "a short buffer gets the count needed");
        free(xyz);
    }

    /* An end far outside the set's region: off the mesh, and the message names the point. */
    float one[3];
    r = trnbake_navmesh_path(nav, x0, z0, 7777.0f, 7777.0f, 1, one, 1, &count);
    check(r == TRNBAKE_PATH_OFF_MESH, "an end outside the region is off the mesh");
    check(trnbake_last_error() && strstr(trnbake_last_error(), "7777,7777") != NULL, "the message names the point");
    printf("off mesh: %s\n", trnbake_last_error() ? trnbake_last_error() : "(none)");

    /* NULL handle, NULL count, a missing file: errors, never crashes. */
    check(trnbake_navmesh_path(NULL, x0, z0, x1, z1, 0, one, 1, &count) == TRNBAKE_PATH_ERROR, "a NULL handle is an error");
    check(trnbake_navmesh_path(nav, x0, z0, x1, z1, 0, one, 1, NULL) == TRNBAKE_PATH_ERROR, "a NULL count is an error");
    check(trnbake_navmesh_open("no/such/navmesh.bin") == NULL && trnbake_last_error() != NULL, "a missing file is NULL");
    printf("missing file: %s\n", trnbake_last_error() ? trnbake_last_error() : "(none)");

    trnbake_navmesh_free(nav);
    trnbake_navmesh_free(NULL);
    if (failures) {
        return 1;
    }
    printf("ok\n");
    return 0;
}
