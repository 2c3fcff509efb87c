// The models' columns; see models.hpp.
#include "gui/models.hpp"

#include "gui/style.hpp"
#include "tuner/store/journal.hpp"

namespace beamlab::gui {

namespace {

QVariant ms_or_blank(std::optional<double> ms) {
  return ms && *ms > 0 ? QVariant(QString::number(*ms, 'f', 4)) : QVariant(QString());
}

QVariant number_or_zero(std::optional<double> v) { return v ? *v : 0.0; }

} // namespace

RunsModel* make_runs_model(QObject* parent) {
  std::vector<RunsModel::Column> cols = {
      {"Run", [](const RunRow& r) { return QVariant::fromValue<qlonglong>(r.run.id); }},
      {"Started (UTC)", [](const RunRow& r) { return qstr(r.run.started_at); }},
      {"Kind",
       [](const RunRow& r) {
         return r.by_hand ? QString("by hand") : qstr(to_string(r.run.kind));
       }},
      {"Label", [](const RunRow& r) { return qstr(r.run.label); }},
      {"Command", [](const RunRow& r) { return qstr(r.run.command); }},
      {"Device", [](const RunRow& r) { return qstr(r.device); }},
      {"Status",
       [](const RunRow& r) { return qstr(to_string(r.run.status)); },
       {},
       [](const RunRow& r) -> QVariant {
         if (r.run.status == db::RunStatus::running) return QColor(0x1f, 0x6f, 0xd0);
         if (r.run.status == db::RunStatus::failed) return QColor(0xd6, 0x27, 0x28);
         if (r.run.status == db::RunStatus::interrupted) return QColor(0xb8, 0x6e, 0x00);
         return {};
       }},
      {"Kernels",
       [](const RunRow& r) -> QVariant {
         if (r.run.kind == db::RunKind::bench)
           return QString("%1 measurements").arg(r.measurements);
         return r.kernels;
       },
       [](const RunRow& r) { return QVariant::fromValue<qlonglong>(r.kernels + r.measurements); }},
      {"Candidates",
       [](const RunRow& r) -> QVariant {
         if (r.run.kind == db::RunKind::bench) return QString("-");
         return QVariant::fromValue<qlonglong>(r.candidates);
       },
       [](const RunRow& r) { return QVariant::fromValue<qlonglong>(r.candidates); }},
  };
  return new RunsModel(
      std::move(cols), [](const RunRow& r) { return r.run.id; }, parent);
}

MeasurementsModel* make_measurements_model(QObject* parent) {
  using M = reports::Measurement;
  auto median = [](const M& m) { return m.samples_ms.empty() ? 0.0 : quantile(m.samples_ms, 0.5); };
  std::vector<MeasurementsModel::Column> cols = {
      {"What", [](const M& m) { return QString(reports::to_string(m.section)); }},
      {"Name", [](const M& m) { return qstr(m.name); }},
      {"Workloads",
       [](const M& m) {
         QStringList w;
         for (const std::string& s : m.workloads) w << qstr(s);
         return w.join(", ");
       }},
      {"Median ms", [median](const M& m) { return ms_or_blank(median(m)); },
       [median](const M& m) { return median(m); }},
      {"Spread", [](const M& m) { return spread_text(m.samples_ms); },
       [](const M& m) { return relative_spread(m.samples_ms); },
       [](const M& m) -> QVariant {
         return unsteady(m.samples_ms) ? QVariant(QColor(0xc0, 0x7a, 0x00)) : QVariant();
       }},
      {"Samples", [](const M& m) { return QVariant::fromValue<qlonglong>(m.samples_ms.size()); }},
      {"Plan",
       [](const M& m) {
         if (m.section != reports::Section::kernel || m.plan.empty()) return qstr(m.plan);
         return QString("%1 (%2)").arg(qstr(m.plan), qstr(m.source.empty() ? "?" : m.source));
       }},
  };
  // A measurement is one per (section, key) in a run.
  return new MeasurementsModel(
      std::move(cols),
      [](const M& m) {
        return static_cast<int64_t>(
            std::hash<std::string>{}(std::string(reports::to_string(m.section)) + "/" + m.key));
      },
      parent);
}

KernelsModel* make_kernels_model(QObject* parent) {
  std::vector<KernelsModel::Column> cols = {
      {"Kernel",
       [](const KernelRow& r) { return qstr(r.label); },
       {},
       {},
       "The kernel's name; where two kernels of the run share it, with the first digits of its "
       "AST hash",
       [](const KernelRow& r) -> QVariant {
         return QString("%1, AST hash %2").arg(qstr(r.kernel.name), qstr(r.kernel.hash));
       }},
      {"Workload", [](const KernelRow& r) { return qstr(r.tuning.workload); }},
      {"Tuned at",
       [](const KernelRow& r) { return qstr(tuner::tuned_at(r.tuning)); },
       {},
       {},
       "A kernel over symbolic variables: the values its candidates were timed at (a timed run "
       "is a launch at each); one plan serves every value in the variables' ranges",
       [](const KernelRow& r) -> QVariant {
         std::string at = tuner::tuned_at(r.tuning);
         if (at.empty()) return {};
         return QString("timed at %1 (a launch at each); every candidate checked at %2")
             .arg(qstr(at), qstr(tuner::checked_at(r.tuning)));
       }},
      {"Status",
       [](const KernelRow& r) {
         if (tuner::tried_by_hand(r.tuning)) return QString("by hand");
         if (r.tuning.stop_reason == "cancelled") return QString("cancelled");
         return qstr(to_string(r.tuning.status));
       }},
      {"Heuristic ms",
       [](const KernelRow& r) { return ms_or_blank(r.tuning.heuristic_ms); },
       [](const KernelRow& r) { return number_or_zero(r.tuning.heuristic_ms); },
       {},
       "The heuristic plan's median over the search's final re-measurement rounds, timed in "
       "the sandbox"},
      {"Tuned ms",
       [](const KernelRow& r) -> QVariant {
         if (tuner::tried_by_hand(r.tuning) || !r.tuning.winner_ms) return QString();
         // With the search's noise: the runner-up comparison's relative half-width.
         QString ms = ms_or_blank(r.tuning.winner_ms).toString();
         return r.tuning.noise > 0 ? QString("%1 ±%2%").arg(ms).arg(100 * r.tuning.noise, 0, 'f', 1)
                                   : ms;
       },
       [](const KernelRow& r) { return number_or_zero(r.tuning.winner_ms); },
       {},
       "The winner's median over the final re-measurement rounds, timed in the sandbox, with "
       "the search's noise"},
      {"Speedup",
       [](const KernelRow& r) -> QVariant {
         // The search's paired verdict: a tie is shown as one, never as a speedup.
         if (tuner::tried_by_hand(r.tuning)) return QString("by hand: no search");
         auto x = r.speedup();
         const std::optional<db::PairedSpeedup>& p = r.tuning.speedup;
         QString interval =
             p ? QString(" (%1-%2)").arg(p->lo, 0, 'f', 2).arg(p->hi, 0, 'f', 2) : QString();
         if (r.tuning.tie_with_heuristic) return "tie" + interval;
         return x ? QVariant(QString::number(*x, 'f', 2) + "x" + interval) : QString();
       },
       [](const KernelRow& r) {
         return tuner::tried_by_hand(r.tuning) ? 0.0 : r.speedup().value_or(0);
       },
       [](const KernelRow& r) -> QVariant {
         return r.speedup().value_or(0) >= 1.05 && !r.tuning.tie_with_heuristic &&
                        !tuner::tried_by_hand(r.tuning)
                    ? QVariant(QColor(0x2e, 0x9d, 0x4a))
                    : QVariant();
       },
       "Heuristic / winner: the paired estimate over the final rounds (each round times both; "
       "95% interval), which can differ from the ratio of the two medians beside it",
       [](const KernelRow& r) -> QVariant {
         const db::Tuning& t = r.tuning;
         if (tuner::tried_by_hand(t) || !t.heuristic_ms || !t.winner_ms || *t.winner_ms <= 0)
           return {};
         QString ratio =
             QString("ratio of the medians %1x").arg(*t.heuristic_ms / *t.winner_ms, 0, 'f', 2);
         if (!t.speedup) return ratio;
         return QString("paired estimate %1x (95%: %2-%3) over the final rounds; %4")
             .arg(t.speedup->estimate, 0, 'f', 2)
             .arg(t.speedup->lo, 0, 'f', 2)
             .arg(t.speedup->hi, 0, 'f', 2)
             .arg(ratio);
       }},
      {"In process",
       [](const KernelRow& r) -> QVariant {
         const db::Tuning& t = r.tuning;
         if (!t.in_process || tuner::tried_by_hand(t)) return QString();
         QString x = QString("%1x (%2-%3)")
                         .arg(t.in_process->estimate, 0, 'f', 2)
                         .arg(t.in_process->lo, 0, 'f', 2)
                         .arg(t.in_process->hi, 0, 'f', 2);
         return t.fidelity.empty() || t.fidelity == "agrees" ? x : x + ", " + qstr(t.fidelity);
       },
       [](const KernelRow& r) { return r.tuning.in_process ? r.tuning.in_process->estimate : 0.0; },
       // Orange where the tuner's own process disagrees with the sandbox by more than 5%.
       [](const KernelRow& r) -> QVariant {
         const std::string& f = r.tuning.fidelity;
         return f.starts_with("differs") || f.starts_with("overruled")
                    ? QVariant(QColor(0xc0, 0x7a, 0x00))
                    : QVariant();
       },
       "The in-process check: the winner against the heuristic timed again, paired, in the "
       "tuner's own process (where a program runs them), after the sandbox's rounds",
       [](const KernelRow& r) -> QVariant {
         const std::string& f = r.tuning.fidelity;
         if (!r.tuning.in_process || f.empty())
           return f.empty() ? QString("not checked (the winner is the heuristic's plan, or the "
                                      "search made none)")
                            : qstr(f);
         return f == "agrees" ? QString("agrees with the sandbox's speedup within 5%") : qstr(f);
       }},
      {"% roofline",
       [](const KernelRow& r) -> QVariant {
         if (!r.roof) return QString();
         return QString("%1 %2%3")
             .arg(100 * r.roof->fraction, 0, 'f', 1)
             .arg(qstr(r.roof->bound))
             .arg(r.roof->over_note().empty() ? "" : " !");
       },
       [](const KernelRow& r) { return r.roof ? r.roof->fraction : 0.0; },
       [](const KernelRow& r) -> QVariant {
         return r.roof && !r.roof->over_note().empty() ? QVariant(QColor(0xc0, 0x7a, 0x00))
                                                       : QVariant();
       }},
      {"Candidates",
       [](const KernelRow& r) { return QVariant::fromValue<qlonglong>(r.candidates); }},
      {"Winner Opts",
       [](const KernelRow& r) {
         if (!tuner::tried_by_hand(r.tuning)) return qstr(r.tuning.winner_opts);
         return QString("fastest tried by hand: %1 %2")
             .arg(ms_text(r.tuning.winner_ms.value_or(0)), qstr(r.tuning.winner_opts));
       }},
  };
  return new KernelsModel(
      std::move(cols), [](const KernelRow& r) { return r.tuning.id; }, parent);
}

CandidatesModel* make_candidates_model(QObject* parent) {
  using C = db::CandidateRow;
  std::vector<CandidatesModel::Column> cols = {
      {"#", [](const C& c) { return c.seq; }},
      {"Iteration", [](const C& c) { return c.iteration; }},
      {"Parent", [](const C& c) { return c.parent; }},
      {"Status",
       [](const C& c) { return qstr(c.status); },
       {},
       [](const C& c) { return QVariant(status_color(status_class(c.status))); }},
      {"Best ms", [](const C& c) { return ms_or_blank(best_ms(c)); },
       [](const C& c) { return best_ms(c) > 0 ? best_ms(c) : 1e300; }},
      {"Median ms", [](const C& c) { return ms_or_blank(median_ms(c)); },
       [](const C& c) { return median_ms(c) > 0 ? median_ms(c) : 1e300; }},
      {"Spread", [](const C& c) -> QVariant { return spread_text(c.samples_ms); },
       [](const C& c) { return relative_spread(c.samples_ms); },
       [](const C& c) -> QVariant {
         return unsteady(c.samples_ms) ? QVariant(QColor(0xb8, 0x6e, 0x00)) : QVariant();
       }},
      {"Compile ms", [](const C& c) { return QString::number(c.compile_ms, 'f', 1); },
       [](const C& c) { return c.compile_ms; }},
      {"Opts", [](const C& c) { return qstr(c.opts.empty() ? "(none)" : c.opts); }},
      {"Error", [](const C& c) { return qstr(c.error); }},
  };
  return new CandidatesModel(
      std::move(cols), [](const C& c) { return int64_t{c.seq}; }, parent);
}

QSortFilterProxyModel* make_proxy(QAbstractItemModel* source, int filter_column, QObject* parent) {
  auto* p = new QSortFilterProxyModel(parent);
  p->setSourceModel(source);
  p->setSortRole(kSortRole);
  p->setFilterKeyColumn(filter_column);
  p->setFilterCaseSensitivity(Qt::CaseInsensitive);
  p->setDynamicSortFilter(true);
  return p;
}

} // namespace beamlab::gui
