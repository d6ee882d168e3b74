// threads.cpp: one terrain handle shared by four std::threads, as a C++ server's zone
// threads would share it. Each thread computes the same points; all must agree with the
// main thread, bit for bit (crates/capi/tests/c_programs.rs compiles and runs it).
//
//   c++ -std=c++17 -pthread -I crates/capi/include threads.cpp -L target/release -ltrnbake
//   ./a.out ../shared/data/swg/terrain/tatooine.trn ../shared/data/swg
#include <cstdio>
#include <thread>
#include <vector>

#include "trnbake.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s FILE.trn [DATA_ROOT]\n", argv[0]);
        return 2;
    }
    TrnbakeTerrain *t = trnbake_terrain_open(argv[1], argc > 2 ? argv[2] : nullptr);
    if (!t) {
        std::fprintf(stderr, "cannot open terrain: %s\n", trnbake_last_error());
        return 1;
    }
    const int n = 2000;
    std::vector<float> xs(n), zs(n), expected(n);
    for (int i = 0; i < n; i++) {
        xs[i] = -7000.0f + 7.0f * static_cast<float>(i);
        zs[i] = 6500.0f - 6.5f * static_cast<float>(i);
        expected[i] = trnbake_height_at(t, xs[i], zs[i]);
    }

    const int threads = 4;
    std::vector<std::vector<float>> got(threads, std::vector<float>(n));
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; k++) {
        // Each thread walks the points from a different start, so they hit the handle at once
        // in different places.
        pool.emplace_back([&, k] {
            for (int j = 0; j < n; j++) {
                int i = (j + k * n / threads) % n;
                got[k][i] = trnbake_height_at(t, xs[i], zs[i]);
            }
        });
    }
    for (auto &th : pool) th.join();
    // Free once, after every thread is done with the handle.
    trnbake_terrain_free(t);

    int mismatches = 0;
    for (int k = 0; k < threads; k++)
        for (int i = 0; i < n; i++)
            if (got[k][i] != expected[i]) mismatches++;
    std::printf("%d threads x %d points: %d mismatches\n", threads, n, mismatches);
    if (mismatches) return 1;
    std::printf("ok\n");
    return 0;
}
