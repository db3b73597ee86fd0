// Package action is the one action table: one row per action type of the
// schema (eventspb.ActionType) with its BrowserGym name and parameters, what
// it targets, and whether the policy's element and text heads choose its
// arguments, and the action sets (Set) an experiment's policy chooses from;
// the action in the env's form (Action), its BrowserGym string
// form (String, Parse) and its event form (ToProto, FromProto). The env's
// parser, the actor's conversions both ways, the policy's heads and the
// demonstrations all read the table, so a new action type is a row here,
// its execution in the env and its policy head.
//
// It imports only the schema and the enum parser: services import it,
// never the other way.
package action
