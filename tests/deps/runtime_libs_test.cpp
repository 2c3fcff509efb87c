// The runtime-side libraries work with this toolchain: OpenMP threads (libomp 19), OpenBLAS
// sgemm (the FLOP/s reference of the benchmarks), SQLite (the database) and nlohmann-json.
#include <gtest/gtest.h>

#include <cblas.h>
#include <nlohmann/json.hpp>
#include <omp.h>
#include <sqlite3.h>

#include <numeric>
#include <set>
#include <vector>

namespace {

TEST(DepsRuntime, OpenMpRunsAParallelReductionOnSeveralThreads) {
  std::vector<int64_t> v(100000);
  std::iota(v.begin(), v.end(), 1);
  int64_t sum = 0;
  std::set<int> threads;
#pragma omp parallel num_threads(2) reduction(+ : sum)
  {
#pragma omp critical
    threads.insert(omp_get_thread_num());
#pragma omp for
    for (size_t i = 0; i < v.size(); ++i) sum += v[i];
  }
  EXPECT_EQ(sum, int64_t{100000} * 100001 / 2);
  EXPECT_EQ(threads.size(), 2u);
}

TEST(DepsRuntime, OpenBlasSgemmMultiplies) {
  // [1 2; 3 4] * [5 6; 7 8] = [19 22; 43 50], row-major.
  float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8}, c[4] = {};
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
  EXPECT_EQ(std::vector<float>(c, c + 4), (std::vector<float>{19, 22, 43, 50}));
}

TEST(DepsRuntime, SqliteStoresAndReadsARowInWalMode) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t(k TEXT, v REAL); INSERT INTO t VALUES('a', 1.5);",
                         nullptr, nullptr, &err),
            SQLITE_OK)
      << err;
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT v FROM t WHERE k = 'a'", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_double(stmt, 0), 1.5);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

TEST(DepsRuntime, JsonRoundTrips) {
  auto j = nlohmann::json::parse(R"({"opts": ["UPCAST:0:4"], "ms": 1.25})");
  EXPECT_EQ(j["opts"][0], "UPCAST:0:4");
  EXPECT_EQ(nlohmann::json::parse(j.dump()), j);
}

} // namespace
