// What a worker knows about its own readiness and the cluster's, as the
// primary tells it (main.ts keeps it; /api/ready and the listing read it).

import type { PlacementTable } from '../../service.js';

export interface WorkerState {
  /** This worker has instantiated the service set it was sent. */
  loaded: boolean;
  /** Every worker has (the primary says so). */
  clusterReady: boolean;
  /** This worker's id (cluster.worker.id). */
  workerId: number;
  /** Where every worker runs each service, as the primary last said (this worker's own entries are read live). */
  placements: PlacementTable;
}
