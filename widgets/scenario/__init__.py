"""The scenario form: builder, workload parameters, users' process options, open-loop rates."""
