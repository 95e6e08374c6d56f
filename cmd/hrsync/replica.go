package main

// The replica identity: which process recorded a run or claimed a tick.

import (
	"os"
	"strconv"

	"github.com/spf13/cobra"
)

// envReplicaID names the variable that sets the replica identity when
// --replica-id is not given (for example the pod's name).
const envReplicaID = "HRSYNC_REPLICA_ID"

// replicaID is the identity of this process: --replica-id (daemon), else
// $HRSYNC_REPLICA_ID, else the host name and the process id ("host-1234").
func replicaID(cmd *cobra.Command) string {
	if f := cmd.Flags().Lookup("replica-id"); f != nil && f.Value.String() != "" {
		return f.Value.String()
	}
	if v := os.Getenv(envReplicaID); v != "" {
		return v
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return host + "-" + strconv.Itoa(os.Getpid())
}
