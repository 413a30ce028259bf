"""What bcast knows about each framework, one package per framework: its op table (``ops()``,
``plan()``, ``run()``), its deviation records with their proofs, its oracle adapters, its lint and
translate targets."""
