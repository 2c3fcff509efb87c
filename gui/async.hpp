// Work off the UI thread: run_async runs `work` on Qt's thread pool and hands its result to
// `done` on `context`'s thread (the UI thread), unless `context` is gone by then. Database
// queries, compiles and profiles all go through here, so the UI thread never waits on them.
#pragma once

#include <type_traits>
#include <utility>

#include <QFutureWatcher>
#include <QObject>
#include <QtConcurrent/QtConcurrent>

namespace beamlab::gui {

template <class Work, class Done>
void run_async(QObject* context, Work work, Done done) {
  using Result = std::invoke_result_t<Work>;
  auto* watcher = new QFutureWatcher<Result>(context);
  QObject::connect(watcher, &QFutureWatcherBase::finished, context,
                   [watcher, done = std::move(done)]() mutable {
                     done(watcher->result());
                     watcher->deleteLater();
                   });
  watcher->setFuture(QtConcurrent::run(std::move(work)));
}

} // namespace beamlab::gui
