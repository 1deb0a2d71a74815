/* commands.h - entry points of the mcpgw subcommands.  Each takes the
 * arguments after the subcommand name (argv[0] is the subcommand) and
 * returns a process exit code (MGW_EXIT_*). */
#ifndef MGW_CORE_COMMANDS_H
#define MGW_CORE_COMMANDS_H

int mgw_backend_main(int argc, char **argv);      /* src/backend/cmd.c */
int mgw_check_config_main(int argc, char **argv); /* src/conf/check_config.c */
int mgw_serve_main(int argc, char **argv);        /* src/proxy/serve_cmd.c */
int mgw_load_main(int argc, char **argv);         /* src/load/load_cmd.c */

#endif
